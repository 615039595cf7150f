"""Entry point of an environment worker process (``python -m eviseek.eval._envworker SETUP``).

``SETUP`` is JSON with the inherited socket's file descriptor, the plugins to import, the
parent's ``sys.path`` (so environments importable in the parent are importable here) and the
keyword arguments every environment is built with (the run's image size).
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    """Connect to the parent over the inherited socket and serve environment calls."""
    setup = json.loads(sys.argv[1])
    sys.path[:] = list(setup["sys_path"])
    from multiprocessing.connection import Connection

    from eviseek.eval.envprocess import worker_main

    worker_main(Connection(int(setup["fd"])), list(setup["plugins"]), dict(setup.get("env_kwargs") or {}))
    # Its environments are closed and the parent has its last reply: skip the interpreter's
    # teardown (seconds on a busy machine with numpy and a simulator loaded), which the parent
    # waits for when a run ends.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
