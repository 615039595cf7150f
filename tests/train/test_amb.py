"""Adaptive Mode Balancing on scripted sequences of batch mode ratios."""

from __future__ import annotations

import logging
import pickle

import pytest
from pydantic import ValidationError

from eviseek.train.amb import AMBConfig, AMBController


def run(controller: AMBController, ratios: list[float], batch: int = 16) -> list[tuple[float, float]]:
    out = []
    for step, r in enumerate(ratios):
        n_on = round(r * batch)
        state = controller.update_counts(n_on, batch - n_on, step)
        out.append((state.lambda_on, state.lambda_off))
    return out


def test_balanced_batches_keep_the_base() -> None:
    c = AMBController()
    assert c.lambdas == (1.2, 1.2)
    assert run(c, [0.5, 0.5, 0.5]) == [(1.2, 1.2)] * 3


def test_starved_mode_gets_the_larger_coefficient() -> None:
    c = AMBController(base=1.2, gain=2.0, min_scale=0.25, max_scale=2.0)
    lams = run(c, [0.0, 0.25, 0.75, 1.0])
    assert lams[0] == pytest.approx((2.4, 0.3))  # all tool-off: tool-on doubled, tool-off at the floor
    assert lams[1] == pytest.approx((1.8, 0.6))
    assert lams[2] == pytest.approx((0.6, 1.8))
    assert lams[3] == pytest.approx((0.3, 2.4))
    # Monotone: the more tool-on, the smaller lambda_on.
    ons = [a for a, _ in lams]
    assert ons == sorted(ons, reverse=True)


def test_release_to_base_at_the_configured_step() -> None:
    c = AMBController(total_steps=8, release_last=3)  # released from step 5 on
    lams = run(c, [0.1] * 8)
    assert all(on > off for on, off in lams[:5])
    assert lams[5:] == [(1.2, 1.2)] * 3
    assert [s.released for s in c.history] == [False] * 5 + [True] * 3
    c2 = AMBController(release_step=0)
    assert run(c2, [0.0, 1.0]) == [(1.2, 1.2)] * 2


def test_ema_smooths_the_ratio() -> None:
    c = AMBController(ema=0.5)
    run(c, [0.0, 1.0])
    assert c.history[1].ratio_on == 1.0 and c.history[1].smoothed_on == pytest.approx(0.5)
    assert c.lambdas == (1.2, 1.2)


def test_batch_without_any_mode_keeps_the_previous_coefficients() -> None:
    c = AMBController()
    c.update(["tool_off"] * 4, step=0)
    before = c.lambdas
    state = c.update([None, None], step=1)
    assert state.ratio_on is None and state.n_none == 2
    assert c.lambdas == before
    assert "amb/ratio_on" not in state.metrics() and state.metrics()["amb/lambda_on"] == before[0]


def test_deterministic_and_picklable() -> None:
    seq = [0.1, 0.3, 0.9, 0.6, 0.5, 0.0]
    a, b = AMBController(ema=0.3), AMBController(ema=0.3)
    assert run(a, seq) == run(b, seq)
    c = pickle.loads(pickle.dumps(a))
    assert c.history == a.history and c.lambdas == a.lambdas


def test_every_update_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="eviseek.train.amb"):
        run(AMBController(release_step=1), [0.25, 0.25])
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "AMB step 0: ratio_on=0.250 lambda_on=1.8000 lambda_off=0.6000"
    assert lines[1].endswith("(released)")


def test_modes_are_counted_from_labels() -> None:
    c = AMBController()
    s = c.update(["tool_on", "tool_off", "tool_off", None, "tool_on", "tool_off"], step=2)
    assert (s.n_on, s.n_off, s.n_none, s.ratio_on, s.step) == (2, 3, 1, 0.4, 2)
    assert c.lambda_for("tool_on") > c.lambda_for("tool_off") and c.lambda_for(None) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_scale": 3.0, "max_scale": 2.0}, "must not exceed"),
        ({"min_scale": 1.5}, "min_scale <= 1 <= max_scale"),
        ({"release_last": 20}, "needs total_steps"),
        ({"total_steps": 10, "release_last": 20}, "exceeds"),
        ({"release_step": 5, "total_steps": 10, "release_last": 2}, "either"),
        ({"target_on": 1.0}, "less than 1"),
    ],
)
def test_bad_configs_are_rejected_with_a_fix(kwargs: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        AMBConfig(**kwargs)


def test_paper_schedule() -> None:
    cfg = AMBConfig(total_steps=80, release_last=20)
    assert cfg.base == 1.2 and cfg.release_at == 60


def test_default_release_is_the_last_quarter_when_the_length_is_known() -> None:
    # The paper releases for "the last 20 steps" of its 80 iterations: a quarter of the run.
    assert AMBConfig(total_steps=80).release_at == 60
    assert AMBConfig(total_steps=10).release_at == 8  # round(2.5) = 2 released steps
    assert AMBConfig(total_steps=80, release_fraction=0.5).release_at == 40
    assert AMBConfig(total_steps=80, release_fraction=None).release_at is None  # fixed ratio
    assert AMBConfig().release_at is None  # length unknown: nothing to count from
    c = AMBController(total_steps=8)
    lams = run(c, [0.0] * 8)
    assert all(on > off for on, off in lams[:6]) and lams[6:] == [(1.2, 1.2)] * 2


def test_training_config_fills_the_run_length_so_amb_releases() -> None:
    from eviseek.train.autotool_config import AutoToolTrainConfig

    cfg = AutoToolTrainConfig.model_validate(
        {"tiny_model": {}, "data": {"synthetic": {"n": 2}}, "grpo": {"max_steps": 40}}
    )
    assert cfg.amb.total_steps == 40 and cfg.amb.release_at == 30
    fixed = AutoToolTrainConfig.model_validate(
        {"tiny_model": {}, "data": {"synthetic": {"n": 2}}, "amb": {"release_fraction": None}}
    )
    assert fixed.amb.release_at is None


def test_additive_rule_moves_coefficients_around_the_base() -> None:
    c = AMBController(rule="additive", base=1.2, gain=2.0, max_shift=2.4)
    lams = run(c, [0.5, 0.0, 0.25, 1.0])
    assert lams[0] == (1.2, 1.2)
    assert lams[1] == pytest.approx((2.2, 0.2))  # all tool-off: +1 to tool-on, -1 to tool-off
    assert lams[2] == pytest.approx((1.7, 0.7))
    assert lams[3] == pytest.approx((0.2, 2.2))


def test_at_base_zero_only_the_additive_rule_offers_a_larger_lambda_off() -> None:
    # Section 4.4 of the paper: with lambda_base = 0 and tool-on over-used, the tool-off
    # coefficient is larger (the policy exploits it). A pure multiple of the base cannot do that.
    additive = AMBController(rule="additive", base=0.0, gain=2.0)
    on, off = run(additive, [0.75])[0]
    assert on == 0.0 and off == pytest.approx(0.5)
    multiplicative = AMBController(rule="multiplicative", base=0.0)
    assert run(multiplicative, [0.75])[0] == (0.0, 0.0)


def test_additive_rule_is_bounded() -> None:
    c = AMBController(rule="additive", base=1.0, gain=10.0, max_shift=0.5)
    assert run(c, [0.0])[0] == (1.5, 0.0)
    assert run(c, [1.0])[0] == (0.0, 1.5)


def _gloo_worker(rank: int, world: int, port: int, results: object) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        c = AMBController()
        # Each process sees only its slice: rank 0 all tool-on, rank 1 all tool-off.
        modes = ["tool_on"] * 6 if rank == 0 else ["tool_off"] * 2
        state = c.update(modes, step=0)
        results[rank] = (state.n_on, state.n_off, state.ratio_on, state.lambda_on, state.lambda_off)  # type: ignore[index]
        local = AMBController(distributed=False).update(modes, step=0)
        results[rank + world] = (local.lambda_on, local.lambda_off)  # type: ignore[index]
    finally:
        dist.destroy_process_group()


@pytest.mark.slow  # two spawned processes import torch: about 20 s on two cores
def test_processes_agree_on_the_coefficients_under_gloo() -> None:
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        results = manager.dict()
        mp.start_processes(_gloo_worker, args=(2, port, results), nprocs=2, join=True, start_method="spawn")
        got = dict(results)
    # Both processes counted the whole batch (6 on, 2 off) and hold the same pair.
    assert got[0] == got[1]
    n_on, n_off, ratio, lam_on, lam_off = got[0]
    assert (n_on, n_off, ratio) == (6, 2, 0.75)
    assert lam_on < 1.2 < lam_off
    # Without the gather each would have balanced on its own slice, in opposite directions.
    assert got[2] != got[3]


def test_single_process_counts_are_unchanged() -> None:
    from eviseek.train.amb import all_process_counts

    assert all_process_counts(3, 4, 1) == (3, 4, 1)
