"""Probe AutoTool's warm-up: does the model read the answer from the crop?

    python scripts/autotool_warmup_probe.py --out runs/probe/A --every 150 \\
        --set warmup.steps=1500 --set warmup.schedule=constant --set warmup.learning_rate=0.001 \\
        --set warmup.mask_unseen_answers=true --set warmup.need_zoom_weight=3

Runs stage 1 of the learning run (``autotool_learning.run.warm_start``, config
``examples/configs/autotool_learning_run.yaml`` plus the overrides) and, every ``--every``
steps, scores held-out questions teacher-forced: each question's ideal reply in one mode is fed
up to ``<answer>``, and the colour whose first token scores highest there is the prediction.
That gives the accuracy each mode would reach if the reply up to the answer were right (for
``<tool_on>``: the exact cell's crop), plus the model's probability of ``<tool_on>`` as its
first token. Much cheaper than greedy rollouts, and not confounded by the boxes. Writes one JSON
line per evaluation to ``OUT.log`` and the warmed model to ``OUT``.

To continue from a saved model: ``--set tiny_model=null --set model=runs/probe/A``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, default=ROOT / "examples/configs/autotool_learning_run.yaml")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--every", type=int, default=150, help="evaluate every this many warm-up steps")
    p.add_argument("--heldout", type=int, default=64)
    p.add_argument("--set", action="append", default=[], help="config override KEY=VALUE (repeatable)")
    args = p.parse_args()

    import torch
    from autotool_learning.run import _frame, warm_start

    from eviseek.train.autotool_config import load_config
    from eviseek.train.tag_grid import TagGridConfig, offered_colours, tag_grid_rows
    from eviseek.train.trl_autotool.environment import ZoomToolEnvironment
    from eviseek.train.trl_autotool.warmup import ideal_conversation

    overrides: dict[str, Any] = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = json.loads(value) if value[:1] in "[{0123456789-tfn" else value
    cfg = load_config(args.config, overrides)
    t = cfg.data.tag_grid
    if t is None:
        sys.exit("the probe needs tag_grid data")
    # The learning run's held-out seed: row seeds never overlap the training rows'.
    grid = TagGridConfig(**t.model_dump(exclude={"n", "seed"}))
    heldout = tag_grid_rows(args.heldout, seed=t.seed + 1, config=grid)
    log = args.out.with_suffix(".log").open("w", encoding="utf-8")
    start = time.time()

    def probe(model: Any, processor: Any, steps: int) -> None:
        if steps % args.every:
            return
        tok = processor.tokenizer
        # Each kind of question offers its own colours (with ``tag_colours: own`` the two lists
        # differ); within one list the first tokens are distinct.
        offered = {need: offered_colours(grid, need) for need in (True, False)}
        first = {
            need: [tok.encode(c, add_special_tokens=False)[0] for c in cs] for need, cs in offered.items()
        }
        on_id, off_id = tok.convert_tokens_to_ids("<tool_on>"), tok.convert_tokens_to_ids("<tool_off>")
        answer_id = tok.convert_tokens_to_ids("<answer>")
        header = tok.encode("<|im_start|>assistant\n", add_special_tokens=False)
        frame = _frame(cfg, processor)
        env = ZoomToolEnvironment(cfg.zoom.coordinates, frame, cfg.zoom.settings)
        model.eval()
        record: dict[str, Any] = {"step": steps, "seconds": round(time.time() - start)}
        with torch.no_grad():
            for mode in ("tool_on", "tool_off"):
                hits: dict[bool, list[bool]] = {True: [], False: []}
                p_on: dict[bool, list[float]] = {True: [], False: []}
                for row in heldout:
                    convo = ideal_conversation(row, env, cfg.zoom.coordinates, frame, mode, compact=True)
                    enc = processor.apply_chat_template(
                        convo,
                        tools=[env.image_zoom_in_tool],
                        tokenize=True,
                        return_dict=True,
                        return_tensors="pt",
                    )
                    ids = enc["input_ids"][0].tolist()
                    logits = model(**enc).logits[0]
                    at = max(i for i, x in enumerate(ids) if x == answer_id)
                    need = bool(row.needs_zoom)
                    guess = offered[need][int(torch.argmax(logits[at, first[need]]))]
                    hits[need].append(guess == row.ground_truth)
                    h = (
                        next(i for i in range(len(ids)) if ids[i : i + len(header)] == header)
                        + len(header)
                        - 1
                    )
                    p_on[need].append(float(torch.softmax(logits[h, [on_id, off_id]], 0)[0]))
                record[mode] = {
                    "acc_need_zoom": round(sum(hits[True]) / max(1, len(hits[True])), 3),
                    "acc_no_need": round(sum(hits[False]) / max(1, len(hits[False])), 3),
                }
                if mode == "tool_on":
                    record["p_tool_on_need_zoom"] = round(sum(p_on[True]) / max(1, len(p_on[True])), 3)
                    record["p_tool_on_no_need"] = round(sum(p_on[False]) / max(1, len(p_on[False])), 3)
        model.train()
        print(json.dumps(record), file=log, flush=True)

    report = warm_start(cfg, args.out, on_step=probe)
    done = {
        "steps": report.steps,
        "seconds": round(report.seconds),
        "loss_last10": sum(report.losses[-10:]) / max(1, len(report.losses[-10:])),
    }
    print(json.dumps(done), file=log, flush=True)


if __name__ == "__main__":
    main()
