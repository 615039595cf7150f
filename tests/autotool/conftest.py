"""Small benchmark files in the real public layouts, written by the tests themselves."""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

import pytest
from PIL import Image as PILImage


def png(size: tuple[int, int] = (320, 240), colour: tuple[int, int, int] = (40, 90, 200)) -> bytes:
    """A small PNG with a white square in the middle (something to zoom into)."""
    img = PILImage.new("RGB", size, colour)
    w, h = size
    img.paste((255, 255, 255), (w // 2 - 10, h // 2 - 10, w // 2 + 10, h // 2 + 10))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def write_parquet(path: Path, rows: list[dict]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.fixture
def vstar_dir(tmp_path: Path) -> Path:
    """lmms-eval's V* layout: parquet shards with image struct, text, label, category, question_id."""
    rows = []
    for i in range(12):
        colours = ["red", "green", "blue", "white"]
        opts = [colours[(i + k) % 4] for k in range(4)]
        text = (
            f"What is the colour of the cup {i}?\n(A) {opts[0]}\n(B) {opts[1]}\n(C) {opts[2]}\n(D) {opts[3]}"
        )
        text += "\nAnswer with the option's letter from the given choices directly."
        rows.append(
            {
                "image": {"bytes": png(colour=(i * 10, 50, 50)), "path": f"sa_{i}.jpg"},
                "text": text,
                "label": "A",
                "category": "direct_attributes" if i < 8 else "relative_position",
                "question_id": f"sa_{i}",
            }
        )
    d = tmp_path / "vstar_bench" / "data"
    write_parquet(d / "test-00000-of-00001.parquet", rows)
    return tmp_path / "vstar_bench"


@pytest.fixture
def hrbench_tsv(tmp_path: Path) -> Path:
    """hr_bench_4k.tsv: two questions x four option cycles, base64 images."""
    path = tmp_path / "hr_bench_4k.tsv"
    b64 = {q: base64.b64encode(png(colour=(q * 80, 20, 20))).decode() for q in range(2)}
    fields = ["index", "question", "A", "B", "C", "D", "answer", "category", "cycle_category", "image"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, delimiter="\t")
        w.writeheader()
        idx = 0
        for q, cat in enumerate(["single", "cross"]):
            base = ["cat", "dog", "bird", "fish"]
            for cycle in range(4):
                opts = base[cycle:] + base[:cycle]
                row = {"index": idx, "question": f"Which animal is on sign {q}?", "category": cat}
                row.update(dict(zip("ABCD", opts, strict=True)))
                row["answer"] = "ABCD"[opts.index("cat")]
                row["cycle_category"] = str(cycle)
                row["image"] = b64[q]
                w.writerow(row)
                idx += 1
    return path


@pytest.fixture
def pope_jsonl(tmp_path: Path) -> Path:
    """POPE rows (lmms-eval fields) with images as files next to the JSONL."""
    d = tmp_path / "pope"
    d.mkdir()
    (d / "img.png").write_bytes(png())
    rows = []
    answers = ["yes", "no", "yes", "no", "yes", "no"]
    for i, a in enumerate(answers):
        cat = ["adversarial", "popular", "random"][i % 3]
        rows.append(
            {
                "question_id": str(i),
                "question": f"Is there a thing {i} in the image?",
                "answer": a,
                "image": "img.png",
                "category": cat,
                "image_source": "coco",
            }
        )
    path = d / "pope.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.fixture
def refcoco_parquet(tmp_path: Path) -> Path:
    """RefCOCO-style rows: COCO [x, y, w, h] boxes and referring expressions."""
    rows = [
        {
            "question_id": "r0",
            "image": {"bytes": png((640, 480)), "path": None},
            "answer": ["the white square"],
            "bbox": [310.0, 230.0, 20.0, 20.0],
            "split": "val",
        },
        {
            "question_id": "r1",
            "image": {"bytes": png((640, 480)), "path": None},
            "answer": ["the left part"],
            "bbox": [0.0, 0.0, 320.0, 480.0],
            "split": "testA",
        },
    ]
    return write_parquet(tmp_path / "refcoco" / "val.parquet", rows)
