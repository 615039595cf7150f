"""Remote environments: serve any Env over HTTP and drive it from another machine.

:class:`EnvServer` hosts environments (a registered id or any Env-protocol factory);
:class:`RemoteEnv` is the client, itself an Env; :func:`check_server` is the conformance check
every env server must pass (``eviseek env check URL``).
"""

from eviseek.envs.remote.check import CheckResult, check_server
from eviseek.envs.remote.client import RemoteEnv, server_info, token_from_env
from eviseek.envs.remote.server import EnvServer, serve_registered
from eviseek.envs.remote.wire import PROTOCOL_VERSION, TOKEN_ENV

__all__ = [
    "PROTOCOL_VERSION",
    "TOKEN_ENV",
    "CheckResult",
    "EnvServer",
    "RemoteEnv",
    "check_server",
    "serve_registered",
    "server_info",
    "token_from_env",
]
