"""AutoTool training rows in the parquet layout verl's multimodal RL dataset reads.

One record per question (the DeepEyes layout): ``data_source``, ``prompt`` (a system turn and a
user turn whose text holds one ``<image>`` placeholder per image), ``images`` (``{"bytes": ...}``
dicts), ``ability``, ``reward_model`` (``{"style": "rule", "ground_truth": ...}``),
``extra_info`` (what the reward reads: ``answer_kind``, ``options``, ``question``, ``split``,
plus ``tools_kwargs`` that hand the zoom tool the full-resolution image) and ``agent_name``
(``tool_agent``, verl's multi-turn tool loop). The tool list is not in the system prompt:
verl's agent loop renders the tools through the chat template.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eviseek._lazy import require
from eviseek.autotool.prompts import system_prompt, user_prompt
from eviseek.autotool.protocol import ZOOM_TOOL_NAME
from eviseek.train.data import TrainingRow


def verl_record(
    row: TrainingRow, index: int, *, split: str = "train", original_image_in_tool: bool = True
) -> dict[str, Any]:
    """One verl dataset record for ``row`` (see the module docstring).

    ``original_image_in_tool`` puts the first image's bytes in the zoom tool's ``create_kwargs``
    so crops come from the original pixels; verl resizes the prompt images before a tool could
    see them, so without it zooms add no detail beyond the shown copy.
    """
    placeholders = "<image>" * len(row.images)
    text = user_prompt(row.question, answer_format=row.answer_format())
    extra: dict[str, Any] = {
        "index": index,
        "id": row.id,
        "split": split,
        "question": row.question,
        "answer_kind": row.answer_kind,
        "options": json.dumps(row.options) if row.options else "",
        "needs_zoom": -1 if row.needs_zoom is None else int(row.needs_zoom),
        "need_tools_kwargs": bool(original_image_in_tool and row.images),
    }
    # Only when used: parquet cannot store an empty struct, and verl defaults a missing key to {}.
    if original_image_in_tool and row.images:
        extra["tools_kwargs"] = {ZOOM_TOOL_NAME: {"create_kwargs": {"image": row.images[0]}}}
    return {
        "data_source": row.source,
        "prompt": [
            {"role": "system", "content": system_prompt(tools=False)},
            {"role": "user", "content": f"{placeholders}{text}"},
        ],
        "images": [{"bytes": b} for b in row.images],
        "ability": "visual_reasoning",
        "reward_model": {"style": "rule", "ground_truth": row.ground_truth},
        "extra_info": extra,
        "agent_name": "tool_agent",
    }


def write_verl_parquet(
    rows: Sequence[TrainingRow],
    path: str | Path,
    *,
    split: str = "train",
    original_image_in_tool: bool = True,
) -> Path:
    """Write ``rows`` as a verl training (or ``split="test"``) parquet file; returns the path."""
    pa = require("pyarrow", "train", "writing verl parquet data")
    pq = require("pyarrow.parquet", "train", "writing verl parquet data")
    records = [
        verl_record(r, i, split=split, original_image_in_tool=original_image_in_tool)
        for i, r in enumerate(rows)
    ]
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(records), out)
    return out
