"""Images a request names by path, read only from the folder the server's operator chose.

By default an env server reads no file a request names: images travel as bytes. A server
started with ``--asset-root DIR`` also accepts a question image given as ``{"path": NAME}``,
read as ``DIR/NAME`` under these rules (each one closes a way a token holder read other files,
or pinned or bloated the server, through an image path):

* ``NAME`` is relative, and ``DIR/NAME`` with every symlink resolved still lies under ``DIR``
  (an absolute path, ``../`` or a symlink pointing out are refused);
* the file is opened without blocking and must be a regular file (a FIFO or a device is refused
  at once instead of holding a thread forever);
* its size is at most ``max_bytes`` and the pixel count its header states fits the request's
  pixel budget, both checked before a pixel is decoded; only PNG and JPEG are read.

Every refusal says the same thing about where the name points ("not an image file under the
server's asset root"), so the answer never tells whether a file exists elsewhere, and no error
names a server path.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from eviseek.envs.remote import wire
from eviseek.errors import ConfigError, EnvError
from eviseek.types import Image

MAX_NAME_CHARS = 1024


class AssetRoot:
    """Reads request-named images from one folder (see the module docstring).

    Args:
        root: the folder; it must exist.
        max_bytes: the largest image file read (its size is checked before reading).
    """

    def __init__(self, root: str | Path, *, max_bytes: int) -> None:
        folder = Path(root).expanduser()
        if not folder.is_dir():
            raise ConfigError(f"--asset-root {root}: not a folder; give an existing folder of images")
        self.root = folder.resolve()
        self.max_bytes = max_bytes

    def opener(self, budget: int) -> wire.PathOpener:
        """A reader for one request, whose images may hold ``budget`` pixels together."""
        left = [budget]

        def open_path(name: Any) -> Image:
            pixels = wire.decode_image_bytes(self.read(name), left[0])
            left[0] -= int(pixels.shape[0]) * int(pixels.shape[1])
            return Image.from_array(pixels)

        return open_path

    def read(self, name: Any) -> bytes:
        """The bytes of the image file ``name`` names, under the rules above."""
        if not isinstance(name, str) or not name or len(name) > MAX_NAME_CHARS or "\0" in name:
            raise EnvError("an image path must be a non-empty relative name under the server's asset root")
        refused = EnvError(
            f"image {name[:200]!r} is not an image file under the server's asset root (names are "
            "relative to it; absolute paths, '..' and links out of it are refused)"
        )
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts:
            raise refused
        try:
            full = (self.root / relative).resolve(strict=True)
        except (OSError, RuntimeError):  # missing, unreadable, a symlink loop
            raise refused from None
        if not full.is_relative_to(self.root) or full == self.root:
            raise refused
        try:
            # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for good.
            # O_NOFOLLOW: a symlink swapped in after resolving is refused, not followed.
            fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            raise refused from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise refused
            if info.st_size > self.max_bytes:
                raise EnvError(
                    f"image {name[:200]!r} has {info.st_size:,} bytes, over the server's limit of "
                    f"{self.max_bytes:,} (--max-request-mb)"
                )
            with os.fdopen(fd, "rb", closefd=True) as fh:
                fd = -1
                data = fh.read(self.max_bytes + 1)
        except OSError:
            raise refused from None
        finally:
            if fd >= 0:
                os.close(fd)
        if len(data) > self.max_bytes:  # it grew after the size check
            raise EnvError(f"image {name[:200]!r} is over the server's limit of {self.max_bytes:,} bytes")
        return data
