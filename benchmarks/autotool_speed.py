"""AutoTool speed: zoom crop + re-encode on an 8K image, and reward throughput on 10,000 completions.

Run: ``python benchmarks/autotool_speed.py`` (add ``--quick`` for fewer repetitions).

Zoom: a 7680x4320 image shown at Qwen's 1,003,520-pixel cap; boxes of several sizes written in
the shown frame are mapped back, cropped from the original and encoded as PNG and JPEG (what a
provider sends). The goal is crop + re-encode under 30 ms for a typical zoom box.

Rewards: accuracy, format and the AMB-scaled tool reward over 10,000 completions drawn from
every reward case, as plain strings and as TRL conversational message lists, in one run.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable

import numpy as np


def _time(fn: Callable[[], object], reps: int) -> float:
    """Median wall time of ``fn`` in milliseconds."""
    fn()  # warm-up
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def bench_zoom(reps: int) -> None:
    from eviseek.envs.image import ZoomResult, fit_within, zoom
    from eviseek.types.image import SHOWN_MAX_PIXELS

    rng = np.random.default_rng(0)
    # Smooth content plus noise: realistic for the encoders (pure noise would be worst case).
    base = rng.integers(0, 255, size=(68, 120, 3), dtype=np.uint8)
    from PIL import Image as PILImage

    arr = np.asarray(PILImage.fromarray(base).resize((7680, 4320), PILImage.Resampling.BILINEAR))
    arr = np.clip(arr.astype(np.int16) + rng.integers(-6, 6, size=arr.shape, dtype=np.int16), 0, 255).astype(
        np.uint8
    )
    sw, sh = fit_within(7680, 4320, SHOWN_MAX_PIXELS)
    scale = 7680 / sw
    print(f"8K image 7680x4320 shown at {sw}x{sh}; medians of {reps} runs")
    cols = ["crop ms", "+PNG ms", "+PNG1 ms", "+JPEG ms", "PNG/JPEG"]
    print(f"{'box (original px)':>20} " + " ".join(f"{c:>9}" for c in cols))
    for side in (256, 512, 1024, 2048):
        b = side / scale
        box = [sw / 2 - b / 2, sh / 2 - b / 2, sw / 2 + b / 2, sh / 2 + b / 2]

        def crop_only(box: list[float] = box) -> object:
            return zoom(arr, box, (sw, sh))

        def crop_encode(fmt: str, box: list[float] = box) -> object:
            res = zoom(arr, box, (sw, sh))
            assert isinstance(res, ZoomResult)
            buf = io.BytesIO()
            pil = res.crop.to_pil()
            if fmt == "PNG":
                pil.save(buf, format="PNG")  # Pillow's default level 6, as Image.encode uses
            elif fmt == "PNG1":
                pil.save(buf, format="PNG", compress_level=1)
            else:
                pil.save(buf, format="JPEG", quality=90)
            return buf

        t_crop = _time(crop_only, reps)
        slow_reps = max(3, reps // 4)  # PNG of a large crop takes seconds on this machine
        t_png = _time(lambda: crop_encode("PNG"), slow_reps)
        t_png1 = _time(lambda: crop_encode("PNG1"), slow_reps)
        t_jpg = _time(lambda: crop_encode("JPEG"), reps)
        res = zoom(arr, box, (sw, sh))
        assert isinstance(res, ZoomResult)
        size = f"{res.crop.width}x{res.crop.height}"
        print(f"{size:>20} {t_crop:>9.2f} {t_png:>9.2f} {t_png1:>9.2f} {t_jpg:>9.2f} {t_png / t_jpg:>9.2f}")


def bench_rewards(n: int) -> None:
    from eviseek.train.amb import AMBController
    from eviseek.train.rewards import AccuracyReward, FormatReward, ToolReward

    call = (
        '<tool_call>{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [10, 20, 110, 220]}}</tool_call>'
    )
    strings = [
        f"<tool_on><think>zoom in on the sign</think>{call}",
        "<tool_off><think>the layout is clear</think><answer>B</answer>",
        "<tool_off><think>plain</think><answer>A</answer>",
        f"<tool_on><think>zoom</think>{call}<answer>C</answer>",
        "<think>no mode</think><answer>blue</answer>",
        "<tool_on><think>bad</think><tool_call>{not json</tool_call>",
    ]
    convo = [
        {"role": "assistant", "content": f"<tool_on><think>zoom</think>{call}"},
        {"role": "tool", "content": [{"type": "image"}, {"type": "text", "text": "zoomed"}]},
        {"role": "assistant", "content": "<think>now it is clear</think><answer>B</answer>"},
    ]
    kw = {
        "ground_truth": ["blue"] * n,
        "options": ['["red", "blue", "green"]'] * n,
        "answer_kind": ["option"] * n,
    }
    # Every completion distinct (a number in its reasoning), as in real rollouts.
    batches = {
        "strings": [strings[i % len(strings)].replace("</think>", f" #{i}</think>", 1) for i in range(n)],
        "conversational": [convo] * n,
    }
    print(f"\nreward throughput on {n:,} completions (completions per second)")
    print(f"{'completions':>16} {'accuracy':>10} {'format':>10} {'tool+AMB':>10} {'all three':>10}")
    rates: dict[str, float] = {}
    for name, comps in batches.items():
        from eviseek.autotool.parser import _parse_text

        row = []
        for fn in (AccuracyReward(), FormatReward(), ToolReward(amb=AMBController())):
            _parse_text.cache_clear()  # each function timed from a cold parse
            t0 = time.perf_counter()
            out = fn(comps, **kw)
            dt = time.perf_counter() - t0
            assert len(out) == n
            row.append(n / dt)
        # All three in sequence, as TRL calls them (the string parse is shared between them).
        _parse_text.cache_clear()
        t0 = time.perf_counter()
        for fn in (AccuracyReward(), FormatReward(), ToolReward(amb=AMBController())):
            fn(comps, **kw)
        row.append(n / (time.perf_counter() - t0))
        rates[name] = row[3]
        print(f"{name:>16} {row[0]:>10,.0f} {row[1]:>10,.0f} {row[2]:>10,.0f} {row[3]:>10,.0f}")
    ratio = rates["strings"] / rates["conversational"]
    print(f"all three rewards: strings / conversational speed ratio = {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    bench_zoom(reps=5 if args.quick else 20)
    bench_rewards(10_000)


if __name__ == "__main__":
    main()
