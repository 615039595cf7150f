"""Probe the mode choice of a learning-run model: p(<tool_on>) per kind of question, and how a push
on one kind carries over to the other.

    python scripts/autotool_mode_probe.py --seed 2 --model runs/learning/s2/warm --steps 8 \\
        --out runs/learning/s2/mode_probe.jsonl

1. **Mode prior.** For each held-out question of seed ``S`` (the learning run's held-out rows,
   ``10S + 3``), the first-token distribution of the reply, rendered exactly as the held-out
   evaluation renders it: ``p(<tool_on>)`` renormalised over the two mode tokens, and the mass
   the two hold together. Means per kind (need-zoom, no-need).
2. **Carry-over.** From the same model, ``--steps`` AdamW steps at GRPO's learning rate on the
   mode token alone, over GRPO's own training questions (``10S + 2``), two ways:

   * ``need_only`` raises ``log p(<tool_on>)`` on need-zoom questions and leaves no-need ones out.
     That is the only mode pressure the released reward leaves when both modes answer a no-need
     question right (they then earn the same, so their GRPO advantages are 0).
   * ``split`` also raises ``log p(<tool_off>)`` on no-need questions: the pressure AMB adds while
     tool-on is over-used (``lambda_off > lambda_on``).

   After every step, the held-out means per kind are measured again. If ``need_only`` lifts the
   no-need questions about as much as the need-zoom ones, the model does not tell the two kinds
   apart at the mode token, and a reward that pushes only on need-zoom questions ends in "always
   zoom".

Ours, a diagnostic for docs/autotool_learning_in_depth.md ("Why GRPO can learn always zoom"); a few dozen
forward and backward passes of the tiny model (seconds on one core). One JSON line per
measurement to ``--out`` (and stdout).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _rows(cfg: Any, n: int, seed: int) -> list[Any]:
    from eviseek.train.tag_grid import TagGridConfig, tag_grid_rows

    t = cfg.data.tag_grid
    grid = TagGridConfig(**t.model_dump(exclude={"n", "seed"}))
    return tag_grid_rows(n, seed=seed, config=grid)


class ModeProbe:
    """The first reply token's mode log-probabilities of one model on fixed rows."""

    def __init__(self, cfg: Any, processor: Any) -> None:
        from autotool_learning.run import _frame

        from eviseek.train.trl_autotool.environment import ZoomToolEnvironment

        self.cfg, self.processor = cfg, processor
        self.frame = _frame(cfg, processor)
        self.env = ZoomToolEnvironment(cfg.zoom.coordinates, self.frame, cfg.zoom.settings)
        tok = processor.tokenizer
        self.on_id = tok.convert_tokens_to_ids("<tool_on>")
        self.off_id = tok.convert_tokens_to_ids("<tool_off>")

    def inputs(self, row: Any) -> Any:
        """The generation prompt of ``row`` as the held-out evaluation renders it."""
        from eviseek.train.trl_autotool.dataset import prompt_for

        images = row.pil_images()
        prompt = prompt_for(
            row, self.cfg.zoom.coordinates, self.frame, compact=self.cfg.prompt_style == "compact"
        )
        it = iter(images)
        user = [
            {"type": "image", "image": next(it)} if p["type"] == "image" else p for p in prompt[1]["content"]
        ]
        messages = [prompt[0], {"role": "user", "content": user}]
        text = self.processor.apply_chat_template(
            messages, tools=[self.env.image_zoom_in_tool], add_generation_prompt=True, tokenize=False
        )
        return self.processor(text=[text], images=images or None, return_tensors="pt")

    def log_probs(self, model: Any, enc: Any) -> Any:
        """``log p`` of the whole vocabulary as the reply's first token."""
        import torch

        return torch.log_softmax(model(**enc).logits[0, -1].float(), 0)

    def measure(self, model: Any, encoded: list[tuple[Any, bool]]) -> dict[str, float]:
        """Means per kind of ``p(<tool_on>)`` over the two mode tokens, and their joint mass."""
        import torch

        model.eval()
        sums: dict[str, list[float]] = {}
        with torch.no_grad():
            for enc, need in encoded:
                lp = self.log_probs(model, enc)
                p_on, p_off = float(lp[self.on_id].exp()), float(lp[self.off_id].exp())
                kind = "need_zoom" if need else "no_need"
                sums.setdefault(f"p_on_{kind}", []).append(p_on / (p_on + p_off) if p_on + p_off else 0.5)
                sums.setdefault(f"mode_mass_{kind}", []).append(p_on + p_off)
        return {k: round(sum(v) / len(v), 4) for k, v in sums.items()}


def _apply_mode_prior(cfg: Any, model: Any, processor: Any, probe: ModeProbe, args: Any, emit: Any) -> None:
    """Fit the kind-dependent mode prior (``--mode-prior`` steps) on the warm-up's questions."""
    from eviseek.train.autotool_config import ModePriorConfig
    from eviseek.train.trl_autotool.warmup import mode_prior_phase

    base = cfg.warmup.mode_prior or ModePriorConfig(steps=args.mode_prior)
    update: dict[str, Any] = {"steps": args.mode_prior}
    if args.mode_prior_lr is not None:
        update["learning_rate"] = args.mode_prior_lr
    for item in args.mode_prior_set:
        key, _, value = item.partition("=")
        update[key] = value if key == "loss" else json.loads(value)
    prior = ModePriorConfig.model_validate({**base.model_dump(), **update})
    warm = cfg.warmup.data.tag_grid if cfg.warmup.data is not None else cfg.data.tag_grid
    rows = _rows(cfg, warm.n, warm.seed)
    r = mode_prior_phase(
        model,
        processor,
        rows,
        probe.env,
        cfg.zoom.coordinates,
        probe.frame,
        prior,
        [probe.env.image_zoom_in_tool],
        seed=cfg.grpo.seed + 2,
        compact=cfg.prompt_style == "compact",
    )
    emit({"mode_prior": prior.model_dump(), **r.model_dump(exclude={"losses"}), "last_loss": r.losses[-1]})


def _push_optimizer(model: Any, params: str, lr: float, rows: tuple[int, int]) -> Any:
    """AdamW over what a push trains. ``mode_rows``: the output layer alone, its gradient zeroed
    outside the two mode tokens' rows (Adam then leaves those rows still: zero moments give a zero
    step), and no weight decay, which would shrink the other rows."""
    import torch

    if params == "all":
        return torch.optim.AdamW(model.parameters(), lr=lr)
    head = model.get_output_embeddings().weight
    for q in model.parameters():
        q.requires_grad_(q is head)
    keep = torch.zeros_like(head[:, :1])
    keep[list(rows)] = 1.0
    head.register_hook(lambda g: g * keep)
    return torch.optim.AdamW([head], lr=lr, weight_decay=0.0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, default=ROOT / "examples/configs/autotool_learning_run.yaml")
    p.add_argument("--seed", type=int, required=True, help="the learning run's seed S")
    p.add_argument("--model", type=Path, required=True, help="a saved model (e.g. OUT/sS/warm)")
    p.add_argument("--heldout", type=int, default=48)
    p.add_argument("--train", type=int, default=32, help="GRPO questions the push uses")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--lr", type=float, help="the pushes' learning rate (default: the config's GRPO rate)")
    p.add_argument(
        "--pushes", default="need_only,split", help="which pushes to run, comma-separated (need_only, split)"
    )
    p.add_argument(
        "--params",
        choices=("all", "mode_rows"),
        default="all",
        help="what the pushes train: every weight (all), or only the output rows of the two mode "
        "tokens (mode_rows: whether the state before the mode token carries the kind at all)",
    )
    p.add_argument(
        "--mode-prior",
        type=int,
        default=0,
        help="first run this many steps of the kind-dependent mode-prior phase on the warm-up's "
        "questions (eviseek.train.trl_autotool.mode_prior; shares and rate from the config's "
        "warmup.mode_prior, else its defaults)",
    )
    p.add_argument("--mode-prior-lr", type=float, help="the mode-prior phase's learning rate")
    p.add_argument("--mode-prior-set", action="append", default=[], help="KEY=VALUE of warmup.mode_prior")
    p.add_argument("--out", type=Path)
    args = p.parse_args()

    import torch
    from autotool_learning_run import seed_overrides

    from eviseek.train.autotool_config import load_config
    from eviseek.train.trl_autotool.run import load_model_and_processor

    torch.set_num_threads(1)
    overrides: dict[str, Any] = {}
    for item in seed_overrides(args.seed):
        key, _, value = item.partition("=")
        overrides[key] = int(value)
    overrides.update({"tiny_model": None, "model": str(args.model), "warmup.steps": 0})
    cfg = load_config(args.config, overrides)
    model, processor, _ = load_model_and_processor(cfg)
    probe = ModeProbe(cfg, processor)
    t = cfg.data.tag_grid
    held = [(probe.inputs(r), bool(r.needs_zoom)) for r in _rows(cfg, args.heldout, t.seed + 1)]
    train = [(probe.inputs(r), bool(r.needs_zoom)) for r in _rows(cfg, args.train, t.seed)]
    log = args.out.open("w", encoding="utf-8") if args.out else None

    def emit(record: dict[str, Any]) -> None:
        line = json.dumps(record)
        print(line, flush=True)
        if log is not None:
            print(line, file=log, flush=True)

    if args.mode_prior:
        _apply_mode_prior(cfg, model, processor, probe, args, emit)
    emit({"model": str(args.model), "seed": args.seed, "push": None, "step": 0, **probe.measure(model, held)})
    lr = args.lr if args.lr is not None else cfg.grpo.learning_rate
    for push in [x for x in args.pushes.split(",") if x]:
        if push not in ("need_only", "split"):
            sys.exit(f"error: --pushes: unknown push {push!r}; use need_only and/or split")
        m = copy.deepcopy(model)
        opt = _push_optimizer(m, args.params, lr, (probe.on_id, probe.off_id))
        for step in range(1, args.steps + 1):
            m.train()
            opt.zero_grad()
            terms = []
            for enc, need in train:
                if need:
                    terms.append(-probe.log_probs(m, enc)[probe.on_id])
                elif push == "split":
                    terms.append(-probe.log_probs(m, enc)[probe.off_id])
            torch.stack(terms).mean().backward()
            opt.step()
            emit({"push": push, "lr": lr, "params": args.params, "step": step, **probe.measure(m, held)})
    if log is not None:
        log.close()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
