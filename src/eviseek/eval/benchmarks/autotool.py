"""AutoTool's image benchmarks: their dataset specs (``eviseek eval --dataset``), scorer and report section.

``NAME:PATH[?OPTIONS]`` with NAME one of :data:`~eviseek.autotool.datasets.KINDS` (``vstar``,
``hrbench4k``, ``hrbench8k``, ``pope``, ``refcoco``/``refcoco+``/``refcocog``, the six reasoning
benchmarks) and ``synthetic:N[:WIDTH]``. OPTIONS, joined by ``&``:

* ``shuffle=on|off`` (V* only, default on): shuffle the options, since the source lists the
  correct one first; ``off`` keeps the source order, as DeepEyes' evaluation shows them;
* ``seed=N`` (V* and synthetic, default 0): the seed of that shuffle / of the generated images;
* ``prompt=official|autotool`` (the six reasoning benchmarks, default ``official``): ask and score
  each question with the benchmark's own prompt and scorer (:mod:`eviseek.autotool.official`),
  or with the dual-mode prompt and its ``<answer>`` extraction (``autotool``, labelled so in
  every question's ``metadata["prompt_style"]``).

Every question is hosted by ``eviseek/ImageZoom-v0`` and scored by the AutoTool rules
(:func:`eviseek.autotool.scoring.score_episode_answer`, registered here as each benchmark's
scorer; the loader also marks each question ``metadata["scorer"] = "autotool"``, which is how a
question file or run directory of them is recognised); ``metadata["autotool_kind"]`` names the
benchmark's kind, which picks its headline metrics (:mod:`eviseek.autotool.metrics`), and the
question's family names the benchmark (grounding questions take the spec's name, ``refcoco``,
``refcoco+`` or ``refcocog``, so the report keeps the three apart).

Images embedded in the files (parquet bytes, base64 in TSVs) are written once, named by content
hash, under ``$EVISEEK_CACHE_DIR/autotool_images`` (default ``~/.cache/eviseek``); the run
directory then keeps its own copies like any run.

The report adds the ``autotool`` section (:mod:`eviseek.eval.autotool_report`) for runs of these
benchmarks.
"""

from __future__ import annotations

import os
from pathlib import Path

from eviseek import env_ids
from eviseek.answers import AnswerScore
from eviseek.autotool.datasets import KINDS, DatasetKind, load_benchmark
from eviseek.autotool.scoring import SCORER
from eviseek.errors import ConfigError
from eviseek.eval.benchmark import Loader, register_benchmark
from eviseek.types import Question, Trajectory

ENV_ID = env_ids.IMAGE_ZOOM
KIND_KEY = "autotool_kind"
"""``Question.metadata`` key naming the benchmark kind (``vstar``, ``hrbench``, ``pope``...)."""


def image_cache_dir() -> Path:
    """Where benchmark images embedded in dataset files are written."""
    root = os.environ.get("EVISEEK_CACHE_DIR") or str(Path.home() / ".cache" / "eviseek")
    return Path(root).expanduser() / "autotool_images"


def parse_options(name: str, arg: str) -> tuple[str, int, bool]:
    """``PATH?seed=3&shuffle=off`` into ``(PATH, seed, shuffle)`` (see :func:`parse_spec_options`)."""
    path, seed, shuffle, _ = parse_spec_options(name, arg)
    return path, seed, shuffle


def parse_spec_options(name: str, arg: str) -> tuple[str, int, bool, str]:
    """``PATH?seed=3&shuffle=off&prompt=autotool`` into ``(PATH, seed, shuffle, prompt)``."""
    from eviseek.autotool.reasoning import PROMPT_STYLES, REASONING_BENCHMARKS

    path, _, query = arg.partition("?")
    seed, shuffle, prompt = 0, True, "official"
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        if key == "seed" and value.lstrip("-").isdigit() and name in ("vstar", "synthetic"):
            seed = int(value)
        elif key == "shuffle" and value in ("on", "off", "1", "0", "true", "false") and name == "vstar":
            shuffle = value in ("on", "1", "true")
        elif key == "prompt" and value in PROMPT_STYLES and name in REASONING_BENCHMARKS:
            prompt = value
        else:
            raise ConfigError(
                f"{name} option {part!r} not understood; V* takes shuffle=on|off and seed=N, "
                "synthetic takes seed=N, the reasoning benchmarks take prompt=official|autotool, "
                "e.g. vstar:PATH?shuffle=off or mathvista:PATH?prompt=autotool"
            )
    return path, seed, shuffle, prompt


def load_autotool_benchmark(name: str, arg: str) -> list[Question]:
    """The questions of ``NAME:ARG`` (see the module docstring), ready for ``eval.runner``."""
    path, seed, shuffle, prompt = parse_spec_options(name, arg)
    if not path:
        raise ConfigError(f"dataset {name}: give a path after the colon, e.g. {name}:/data/{name}")
    kind: DatasetKind
    kind, questions = load_benchmark(
        f"{name}:{path}", image_cache_dir(), seed=seed, shuffle_vstar=shuffle, prompt_style=prompt
    )
    for q in questions:
        if kind == "grounding" and name != "grounding":
            q.family = name  # refcoco, refcoco+ or refcocog: reported as separate benchmarks
        q.env_id = ENV_ID
        q.metadata = {**q.metadata, "scorer": SCORER, KIND_KEY: kind}
    return questions


def owns(question: Question) -> bool:
    """Whether ``question`` was loaded by one of these benchmarks (their loader's mark)."""
    return question.metadata.get("scorer") == SCORER


def score(trajectory: Trajectory, question: Question, raw: str | None) -> AnswerScore:
    """AutoTool's own rules: grounding boxes mapped from the shown frame, reasoning answers
    extracted from the reply."""
    from eviseek.autotool.scoring import answer_text, score_episode_answer

    return score_episode_answer(question, answer_text(trajectory.plan, raw), trajectory.plan)


def loader(name: str) -> Loader:
    """The loader of ``name:ARG`` specs."""

    def load(arg: str) -> list[Question]:
        return load_autotool_benchmark(name, arg)

    return load


for _name in KINDS:
    register_benchmark(
        _name,
        loader(_name),
        env_id=ENV_ID,
        description="AutoTool benchmark",
        scorer=score,
        scoring=SCORER,
        owns=owns,
        report_sections=("autotool",),
    )
