"""Cost of turning images into data URLs for the ``openai/`` provider, side by side in one run.

An EviSeek answering call resends the frames on its evidence board, and the seeker resends the
recent views, so the same image is encoded many times per episode. This script times, on the
same rendered-looking frames (smooth gradients plus noise, like a simulator view):

* PNG and JPEG encoding at the default 1-megapixel budget, the cache bypassed,
* the same call again with the cache warm (what a resent frame costs),
* the size of each data URL (what goes over the wire).

It prints the median per-image time of each, the ratios, and the URL sizes.

    python benchmarks/openai_image_encoding.py [--width 1280] [--height 960] [--frames 4] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from eviseek.models import wire_images
from eviseek.models.wire_images import DEFAULT_MAX_PIXELS, image_data_url
from eviseek.types import Image


def frames(width: int, height: int, n: int, seed: int = 0) -> list[Image]:
    """``n`` distinct frames that compress like rendered scenes, not like pure noise."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    out = []
    for i in range(n):
        base = np.stack(
            [
                127 + 100 * np.sin(xx / (40 + 7 * i)),
                127 + 100 * np.cos(yy / (55 + 5 * i)),
                127 + 80 * np.sin((xx + yy) / (70 + 3 * i)),
            ],
            axis=2,
        )
        noisy = base + rng.normal(0, 6, base.shape)
        out.append(Image.from_array(np.clip(noisy, 0, 255).astype(np.uint8)))
    return out


def time_per_image(images: list[Image], fmt: str, cached: bool, repeats: int) -> tuple[float, int]:
    """Median seconds per image over ``repeats`` passes, and the mean data-URL length."""
    runs = []
    size = 0
    for _ in range(repeats):
        if not cached:
            wire_images._ENCODE_CACHE = wire_images._EncodeCache()
        start = time.perf_counter()
        urls = [image_data_url(img, max_pixels=DEFAULT_MAX_PIXELS, fmt=fmt) for img in images]
        runs.append((time.perf_counter() - start) / len(images))
        size = sum(len(u) for u in urls) // len(urls)
    return statistics.median(runs), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=960)
    parser.add_argument("--frames", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    images = frames(args.width, args.height, args.frames)
    for img in images:
        img.digest()  # an Image computes its hash once; agents reuse the same objects
    print(f"{args.frames} frames of {args.width}x{args.height}, budget {DEFAULT_MAX_PIXELS} pixels")
    results = {}
    for fmt in ("png", "jpeg"):
        cold, size = time_per_image(images, fmt, cached=False, repeats=args.repeats)
        time_per_image(images, fmt, cached=False, repeats=1)  # fill the cache for this format
        warm, _ = time_per_image(images, fmt, cached=True, repeats=args.repeats)
        results[fmt] = (cold, warm, size)
        print(
            f"{fmt:>4}: encode {cold * 1e3:8.2f} ms/image   cached {warm * 1e6:8.1f} us/image   "
            f"ratio {cold / warm:8.0f}x   data URL {size / 1024:7.0f} KiB"
        )
    png, jpeg = results["png"], results["jpeg"]
    print(
        f"jpeg vs png: {png[0] / jpeg[0]:.1f}x faster to encode, {png[2] / jpeg[2]:.1f}x smaller on the wire"
    )


if __name__ == "__main__":
    main()
