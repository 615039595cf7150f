"""The warm-up's crop-reading check: does the model read a tag-grid answer from the zoomed crop?

Each need-zoom question of the check set is fed its ideal ``<tool_on>`` reply (the exact cell's
crop, as the real tool returns it) up to ``<answer>``; the offered colour whose first token
scores highest there is the model's reading. The share read right is the accuracy the zoom
could reach if the reply up to the answer were right: one forward pass per question, far
cheaper than greedy rollouts and not confounded by the boxes. Chance is one over the number of
offered colours (1/3 with ``tag_colours: own``).

Ours, not the paper's: the paper starts from a pretrained model that can already read a crop.
The CPU-scale learning run uses it to keep the warm-up's crop phase going until the tiny model
reads the crop (``warmup.crop_check``), since GRPO cannot learn that a zoom pays when the crop
does not help the answer (docs/autotool_learning_in_depth.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eviseek._lazy import require
from eviseek.train.data import TrainingRow
from eviseek.train.frames import ImageFrame
from eviseek.train.rollouts import IM_START
from eviseek.train.trl_autotool.environment import ZoomToolEnvironment


def offered_options(row: TrainingRow) -> list[str]:
    """The answers a tag-grid question offers, read from its ``Answer with one of: a, b.`` clause."""
    marker = "Answer with one of:"
    if marker not in row.question:
        raise ValueError(f"row {row.id} offers no answers ('{marker} ...' missing)")
    tail = row.question.split(marker, 1)[1].strip().rstrip(".")
    return [w.strip() for w in tail.split(",") if w.strip()]


def crop_reading(
    model: Any,
    processor: Any,
    rows: Sequence[TrainingRow],
    env: ZoomToolEnvironment,
    coordinates: Any,
    frame: ImageFrame,
    tools: list[Any] | None,
    *,
    compact: bool = False,
) -> dict[str, float]:
    """Teacher-forced reading of the need-zoom ``rows`` with ``<tool_on>``: accuracy, the number
    of questions scored, and the mean probability of ``<tool_on>`` as the reply's first token."""
    from eviseek.train.trl_autotool.warmup import ideal_conversation

    torch = require("torch", "train", "the crop-reading check")
    tok = getattr(processor, "tokenizer", processor)
    answer_id = tok.convert_tokens_to_ids("<answer>")
    on_id, off_id = tok.convert_tokens_to_ids("<tool_on>"), tok.convert_tokens_to_ids("<tool_off>")
    header = tok.encode(f"{IM_START}assistant\n", add_special_tokens=False)
    need = [r for r in rows if r.needs_zoom and r.target_boxes and r.images]
    hits, p_on = 0, 0.0
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad():
        for row in need:
            options = offered_options(row)
            first = [tok.encode(c, add_special_tokens=False)[0] for c in options]
            convo = ideal_conversation(row, env, coordinates, frame, "tool_on", compact=compact)
            enc = processor.apply_chat_template(
                convo, tools=tools, tokenize=True, return_dict=True, return_tensors="pt"
            )
            enc = {k: v.to(device) for k, v in enc.items()}
            ids = enc["input_ids"][0].tolist()
            logits = model(**enc).logits[0]
            at = max(i for i, x in enumerate(ids) if x == answer_id)
            hits += options[int(torch.argmax(logits[at, first]))] == row.ground_truth
            h = next(i for i in range(len(ids)) if ids[i : i + len(header)] == header) + len(header) - 1
            p_on += float(torch.softmax(logits[h, [on_id, off_id]].float(), 0)[0])
    if was_training:
        model.train()
    n = len(need)
    return {"accuracy": hits / n if n else 0.0, "questions": float(n), "p_tool_on": p_on / n if n else 0.0}
