"""Training rows in TRL's conversational VLM format (``prompt`` + ``images`` + reward columns)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eviseek._lazy import require
from eviseek.autotool.prompts import system_prompt, user_prompt
from eviseek.errors import ConfigError
from eviseek.train.autotool_config import AutoToolTrainConfig, Coordinates, DataConfig
from eviseek.train.data import TrainingRow
from eviseek.train.frames import ImageFrame, box_frame


def prompt_for(
    row: TrainingRow,
    coordinates: Coordinates,
    frame: ImageFrame,
    *,
    compact: bool = False,
    offer_tool: bool = True,
) -> list[dict[str, Any]]:
    """TRL conversational prompt of a row: system turn, then the images and the question.

    The tool list is not in the system text: TRL's chat template renders the tools itself.
    ``compact`` uses the short prompts (``prompt_style: compact`` in the training config);
    ``offer_tool=False`` a system prompt that mentions neither the tool nor a mode choice.
    """
    size: tuple[int, int] | None = None
    fmt = row.answer_format()
    if row.images:
        pil = row.pil_images()[0]
        if coordinates == "normalized_1000":
            fmt += " Write zoom boxes on a 0..1000 grid over the image."
        else:
            size = box_frame(coordinates, frame, pil.width, pil.height)
    content: list[dict[str, Any]] = [{"type": "image"} for _ in row.images]
    content.append(
        {
            "type": "text",
            "text": user_prompt(row.question, answer_format=fmt, image_size=size, compact=compact),
        }
    )
    return [
        # Both turns use content lists: Arrow cannot store a column that mixes strings and lists.
        {
            "role": "system",
            "content": [
                {
                    "type": "text",
                    "text": system_prompt(tools=False, compact=compact, offer_tool=offer_tool),
                }
            ],
        },
        {"role": "user", "content": content},
    ]


def trl_dataset(
    rows: Sequence[TrainingRow],
    coordinates: Coordinates,
    frame: ImageFrame,
    *,
    compact: bool = False,
    offer_tool: bool = True,
) -> Any:
    """A ``datasets.Dataset`` in TRL's VLM format with the columns the rewards read."""
    datasets = require("datasets", "train", "AutoTool training data")
    records = []
    for row in rows:
        rec = row.to_trl(tools_in_system=False)
        rec["prompt"] = prompt_for(row, coordinates, frame, compact=compact, offer_tool=offer_tool)
        records.append(rec)
    return datasets.Dataset.from_list(records)


def load_rows(cfg: AutoToolTrainConfig) -> list[TrainingRow]:
    """The GRPO training rows the config names (``data``: synthetic, tag grid or a file)."""
    return rows_for(cfg.data)


def warmup_rows(cfg: AutoToolTrainConfig, train_rows: list[TrainingRow] | None = None) -> list[TrainingRow]:
    """The warm-up's rows: ``warmup.data`` when the config names its own, else the GRPO rows
    (``train_rows`` when already loaded)."""
    if cfg.warmup.data is not None:
        return rows_for(cfg.warmup.data, where="warmup.data")
    return train_rows if train_rows is not None else load_rows(cfg)


def rows_for(data: DataConfig, *, where: str = "data") -> list[TrainingRow]:
    """The rows one data section names (synthetic, tag grid or a file); ``where`` names the
    section in errors."""
    from eviseek.train.data import SyntheticConfig, load_saved_rows, load_training_rows, synthetic_rows

    if data.tag_grid is not None:
        from eviseek.train.tag_grid import TagGridConfig, tag_grid_rows

        t = data.tag_grid
        return tag_grid_rows(t.n, seed=t.seed, config=TagGridConfig(**t.model_dump(exclude={"n", "seed"})))
    if data.synthetic is not None:
        s = data.synthetic
        return synthetic_rows(s.n, seed=s.seed, config=SyntheticConfig(**s.model_dump(exclude={"n", "seed"})))
    f = data.file
    assert f is not None
    if not f.path.exists():
        raise ConfigError(f"{where}.file.path {f.path} does not exist")
    if f.layout == "saved":
        rows = load_saved_rows(f.path)
        return rows[: f.limit] if f.limit else rows
    return load_training_rows(f.path, f.layout, limit=f.limit)
