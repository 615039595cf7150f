"""A conformance check for :class:`~eviseek.envs.base.Env` implementations.

In the spirit of Gymnasium's ``env_checker``: it drives an environment through the protocol and
raises ``AssertionError`` with a readable message at the first broken promise. The test suite
runs it over every registered id.
"""

from __future__ import annotations

from typing import Any

from eviseek.envs.base import Env
from eviseek.types import Action, ActionSpec, Observation, Question, StepResult


def _check_obs(obs: Any, where: str) -> Observation:
    assert isinstance(obs, Observation), f"{where}: expected an Observation, got {type(obs).__name__}"
    arr = obs.image.array()
    assert arr.ndim == 3 and arr.shape[2] == 3, f"{where}: image must be HxWx3, got {arr.shape}"
    assert arr.dtype.name == "uint8", f"{where}: image must be uint8, got {arr.dtype}"
    return obs


def _check_step(res: Any, where: str) -> StepResult:
    assert isinstance(res, StepResult), f"{where}: step must return a StepResult, got {type(res).__name__}"
    _check_obs(res.observation, where)
    assert isinstance(res.terminated, bool) and isinstance(res.truncated, bool), (
        f"{where}: flags must be bools"
    )
    assert isinstance(res.info, dict), f"{where}: info must be a dict"
    ids = []
    for k, frame in enumerate(res.observation.action_frames):
        _check_obs(frame, f"{where}: action frame {k}")
        assert not frame.action_frames, f"{where}: an action frame must not hold frames of its own"
        ids.append(frame.frame_id)
    ids.append(res.observation.frame_id)
    assert ids == sorted(set(ids)), (
        f"{where}: action frames must have increasing frame ids below the step's own, got {ids}"
    )
    return res


def _example(spec: ActionSpec) -> Action:
    args = {p: (spec.choices.get(p) or ["?"])[0] for p in spec.params}
    return Action(name=spec.name, args=args)


def check_env(env: Env, question: Question, *, seed: int = 0, max_actions: int = 4) -> None:
    """Check ``env`` against the Env protocol using ``question``; raise ``AssertionError`` if broken.

    Checks: ``reset`` returns an observation and a dict; the same question and seed give the same
    first image; ``legal_actions`` returns specs with unique names; a few legal actions step
    cleanly with increasing frame ids; each manipulation primitive, with its first legal
    arguments, steps cleanly too (frames it rendered on the way, ``action_frames``, are valid
    images with increasing ids below the step's own); an unknown action comes back as
    ``success=False`` feedback (never an exception); ``close`` works.
    """
    assert isinstance(getattr(env, "env_id", None), str), "env must have a string env_id"
    obs, info = env.reset(seed=seed, options={"question": question})
    _check_obs(obs, "reset")
    assert isinstance(info, dict), "reset must return (observation, dict)"
    first = obs.image.digest()
    obs2, _ = env.reset(seed=seed, options={"question": question})
    assert obs2.image.digest() == first, (
        "reset with the same question and seed must give the same first image"
    )
    specs = env.legal_actions()
    assert specs and all(isinstance(s, ActionSpec) for s in specs), "legal_actions must return ActionSpecs"
    names = [s.name for s in specs]
    assert len(names) == len(set(names)), f"legal action names must be unique, got {names}"
    last = obs2.frame_id
    for spec in [s for s in specs if s.kind != "control"][:max_actions]:
        res = _check_step(env.step(_example(spec)), f"step({spec.name})")
        assert res.observation.frame_id >= last, "frame ids must not decrease"
        last = res.observation.frame_id
        if res.terminated or res.truncated:
            break
    obs3, _ = env.reset(seed=seed, options={"question": question})
    last = obs3.frame_id
    for spec in [s for s in specs if s.kind == "manipulation"]:
        res = _check_step(env.step(_example(spec)), f"step({spec.name})")
        frames = res.observation.action_frames
        if frames:
            assert frames[0].frame_id > last, "an action's frames must come after the frames before it"
        assert res.observation.frame_id >= last, "frame ids must not decrease"
        last = res.observation.frame_id
        if res.terminated or res.truncated:
            break
    env.reset(seed=seed, options={"question": question})
    res = _check_step(env.step(Action(name="definitely_not_an_action")), "step(unknown)")
    assert res.feedback.success is False, "an unknown action must fail as feedback, not succeed"
    assert res.feedback.reason, "a failed action must say why"
    env.close()
