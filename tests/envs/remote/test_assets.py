"""Request-named images under ``--asset-root``: only regular files inside it, bounded before decoding."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from eviseek.envs.remote.assets import AssetRoot
from eviseek.errors import ConfigError, EnvError


def _png(path: Path, width: int, height: int, mode: str = "RGB") -> Path:
    PILImage.new(mode, (width, height), 0).save(path, format="PNG")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "assets"
    folder.mkdir()
    (folder / "sub").mkdir()
    _png(folder / "sub" / "ok.png", 8, 6)
    _png(tmp_path / "outside.png", 8, 6)
    return folder


def test_a_file_under_the_root_is_read(root: Path) -> None:
    image = AssetRoot(root, max_bytes=2**20).opener(10_000)("sub/ok.png")
    assert (image.width, image.height) == (8, 6) and image.path is None


@pytest.mark.parametrize("name", ["../outside.png", "sub/../../outside.png", "OUTSIDE_ABS", "link.png", ""])
def test_names_that_leave_the_root_are_refused_alike(root: Path, name: str) -> None:
    (root / "link.png").symlink_to(root.parent / "outside.png")
    if name == "OUTSIDE_ABS":
        name = str(root.parent / "outside.png")
    with pytest.raises(EnvError) as refused:
        AssetRoot(root, max_bytes=2**20).opener(10_000)(name)
    assert str(root) not in str(refused.value)  # the server's folder is never named


def test_a_missing_file_and_one_outside_get_the_same_answer(root: Path) -> None:
    assets = AssetRoot(root, max_bytes=2**20)
    answers = []
    for name in ("../outside.png", "../missing.png"):
        with pytest.raises(EnvError) as refused:
            assets.read(name)
        answers.append(str(refused.value).replace(name, "NAME"))
    assert answers[0] == answers[1]  # the answer does not tell whether a file exists


def test_a_fifo_and_a_folder_are_refused_at_once(root: Path) -> None:
    os.mkfifo(root / "pipe.png")  # nobody ever writes to it: a blocking open would wait for good
    for name in ("pipe.png", "sub"):
        started = time.monotonic()
        with pytest.raises(EnvError, match="not an image file"):
            AssetRoot(root, max_bytes=2**20).read(name)
        assert time.monotonic() - started < 0.5


def test_byte_and_pixel_caps_apply_before_decoding(root: Path) -> None:
    big = _png(root / "big.png", 12_000, 12_000, mode="1")  # 144 Mpx in a few hundred KB
    assert big.stat().st_size < 2**20
    started = time.monotonic()
    with pytest.raises(EnvError, match="12000x12000 pixels"):
        AssetRoot(root, max_bytes=2**20).opener(32 * 2**20)("big.png")
    assert time.monotonic() - started < 0.5
    with pytest.raises(EnvError, match="over the server's limit"):
        AssetRoot(root, max_bytes=1024).read("big.png")
    noise = np.random.default_rng(0).integers(0, 255, (40, 40, 3), dtype=np.uint8)
    PILImage.fromarray(noise).save(root / "a.png")
    opener = AssetRoot(root, max_bytes=2**20).opener(2000)  # the request's images share one budget
    opener("a.png")
    with pytest.raises(EnvError, match="pixels"):
        opener("a.png")


def test_only_png_and_jpeg_are_read(root: Path) -> None:
    buf = io.BytesIO()
    PILImage.new("RGB", (4, 4)).save(buf, format="GIF")
    (root / "x.gif").write_bytes(buf.getvalue())
    with pytest.raises(EnvError, match="PNG or a JPEG"):
        AssetRoot(root, max_bytes=2**20).opener(10_000)("x.gif")


def test_the_root_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a folder"):
        AssetRoot(tmp_path / "nope", max_bytes=1024)
