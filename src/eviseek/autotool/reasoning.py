"""Loaders and answer extraction for the six reasoning benchmarks of AutoTool's Table 3.

MathVista, MathVerse, MathVision, WeMath, DynaMath and LogicVista, read from the files they are
usually distributed as (nothing is downloaded):

* the Hugging Face parquet/JSON releases: MathVista (``pid``, ``question``, ``choices``,
  ``answer``, ``question_type``, ``answer_type``, ``precision``, ``unit``, ``query``,
  ``decoded_image``/``image``), MathVerse (``sample_index``, ``question``/``query_cot``,
  ``answer``, ``question_type``, ``problem_version``, ``image``), MathVision (``id``,
  ``question``, ``options``, ``answer``, ``level``, ``subject``, ``decoded_image``/``image``),
  WeMath (``ID``, ``question``, ``option``, ``answer``, ``key``, ``image_path``), DynaMath
  (``id``, ``question``, ``image``, ``ground_truth``, ``answer_type``) and LogicVista
  (``imagename``, ``question``, ``answer``, ``skill``);
* the VLMEvalKit TSVs (``index``, ``image`` in base64, ``question``, ``answer``, option columns
  ``A``..``H``, ``category``/``skills``), which every one of the six has.

Questions keep the benchmark's own wording (the paper used each benchmark's official prompt
for these); the options are listed as ``(A) ...`` lines. :func:`extract_answer` pulls the
final answer out of a free-form reply (an ``<answer>`` block first, else the usual "the answer
is" phrasings, else the last option letter or number), and :func:`score_reasoning` compares it
with the ground truth the way the benchmarks' rule-based scorers do: option letters (a set of
letters for LogicVista's multi-answer questions), numbers within the stated precision or a
relative tolerance of 1e-2, otherwise normalised text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from eviseek.autotool.datasets import ImageStore, iter_rows, with_options
from eviseek.autotool.wemath import wemath_part
from eviseek.errors import ConfigError
from eviseek.types import AnswerContract, Question

ReasoningBenchmark = Literal["mathvista", "mathverse", "mathvision", "wemath", "dynamath", "logicvista"]
REASONING_BENCHMARKS: tuple[str, ...] = (
    "mathvista",
    "mathverse",
    "mathvision",
    "wemath",
    "dynamath",
    "logicvista",
)
LETTERS = "ABCDEFGH"

_IMAGE_KEYS = ("decoded_image", "image", "image_path", "imagename", "image_file")
_ID_KEYS = ("pid", "sample_index", "id", "ID", "index", "question_id")


def _first(row: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        v = row.get(k)
        if v not in (None, "", "nan"):
            return v
    return None


def _options_of(row: dict[str, Any]) -> list[str]:
    """Options from ``choices``/``options`` (a list or its JSON) or from ``A``..``H`` columns."""
    raw = _first(row, ("choices", "options"))
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = None
    if hasattr(raw, "tolist"):
        raw = raw.tolist()
    if isinstance(raw, (list, tuple)) and raw:
        return [str(x) for x in raw]
    cols = [str(row[k]) for k in LETTERS if row.get(k) not in (None, "", "nan")]
    if cols:
        return cols
    text = row.get("option")  # WeMath: "A. 3; B. 4; C. 5"
    if isinstance(text, str) and text.strip():
        parts = re.split(r"\s*;\s*(?=[A-H][.:])", text.strip())
        return [re.sub(r"^[A-H][.:]\s*", "", p).strip() for p in parts if p.strip()]
    return []


def _truth_letters(answer: Any, options: list[str]) -> str | None:
    """The answer as option letters (``"B"``, or ``"A,C"`` for several), or ``None``."""
    text = str(answer).strip()
    letters = re.findall(r"\b([A-H])\b", text.upper())
    if (
        letters
        and all(LETTERS.index(x) < len(options) for x in letters)
        and len(text) <= 3 * len(letters) + 4
    ):
        return ",".join(sorted(set(letters)))
    for i, opt in enumerate(options):
        if text.lower() == opt.strip().lower():
            return LETTERS[i]
    return None


PromptStyle = Literal["official", "autotool"]
PROMPT_STYLES: tuple[str, ...] = ("official", "autotool")


# Long because it maps every release of REASONING_BENCHMARKS, in their parquet/JSON and TSV
# forms, onto one Question per row: one loop whose body reads each column the releases name
# differently and keeps what the official prompts and scorers need in the metadata.
def load_reasoning(
    benchmark: str,
    path: str | Path,
    image_dir: str | Path,
    *,
    limit: int | None = None,
    prompt_style: PromptStyle = "official",
) -> list[Question]:
    """Questions of one reasoning benchmark from its parquet/JSON(L) release or VLMEvalKit TSV.

    Option questions get ``kind="option"`` and the answer as letters; the rest keep the answer
    text (``metadata["answer_type"]`` and ``metadata["precision"]`` guide scoring).
    ``prompt_style`` (``metadata["prompt_style"]``) decides how the question is asked and scored:
    ``official``, the benchmark's own prompt and scorer (:mod:`eviseek.autotool.official`, the
    default), or ``autotool``, the dual-mode prompt with the ``<answer>`` extraction below.
    The fields the official prompts are built from are kept in the metadata.
    """
    if prompt_style not in PROMPT_STYLES:
        raise ConfigError(f"prompt style {prompt_style!r}: use official or autotool")
    name = benchmark.lower()
    if name not in REASONING_BENCHMARKS:
        raise ConfigError(
            f"unknown reasoning benchmark {benchmark!r}; use one of {', '.join(REASONING_BENCHMARKS)}"
        )
    p = Path(path)
    store = ImageStore(image_dir, p.parent if p.is_file() else p)
    out: list[Question] = []
    for i, row in enumerate(iter_rows(p)):
        if limit is not None and len(out) >= limit:
            break
        question = _first(row, ("question", "problem", "query_wo", "query_cot", "query"))
        answer = _first(row, ("answer", "ground_truth", "label"))
        image = _first(row, _IMAGE_KEYS)
        if question is None or answer is None:
            raise ConfigError(
                f"{name} row {i} lacks a question or an answer column; expected the benchmark's "
                "parquet/JSON release or its VLMEvalKit TSV"
            )
        options = _options_of(row)
        qtype = str(row.get("question_type") or ("multi_choice" if options else "free_form"))
        letters = _truth_letters(answer, options) if options else None
        meta: dict[str, Any] = {
            "benchmark": name,
            "question_type": qtype,
            "answer_type": str(row.get("answer_type") or ""),
            "precision": row.get("precision"),
            "unit": row.get("unit"),
            "answer_text": str(answer),
            "prompt_style": prompt_style,
            "question_raw": str(question),
            "options": options,
        }
        # What the official prompts are built from: MathVista's ready-made query, MathVerse's
        # chain-of-thought query, WeMath's option line as released.
        query = _first(row, ("query",)) if name == "mathvista" else _first(row, ("query_cot",))
        if name in ("mathvista", "mathverse") and query is not None:
            meta["query"] = str(query)
        if name == "wemath" and isinstance(row.get("option"), str):
            meta["option_text"] = row["option"]
        keys = ("problem_version", "level", "subject", "skill", "skills", "key", "category", "split")
        for k in (*keys, "qid", "varid", "knowledge_level"):
            if row.get(k) not in (None, ""):
                meta[k] = str(row[k])
        qid = _first(row, _ID_KEYS)
        part = wemath_part(row.get("key")) if name == "wemath" else None
        if part is not None and row.get("ID") not in (None, ""):
            # WeMath's ID names the problem, shared by the whole problem and its sub-problems;
            # its key names the part. Both go into the question's id, which must be unique,
            # and the problem into the metadata for the four-dimensional metrics.
            meta["wemath_id"] = str(row["ID"])
            qid = f"{row['ID']}-{part[1]}"
        if options and letters is not None:
            text, truth, contract = (
                with_options(str(question), options),
                letters,
                AnswerContract(kind="option", options=options),
            )
        else:
            text, truth, contract = str(question), str(answer).strip(), AnswerContract(kind="text")
        out.append(
            Question(
                id=f"{name}-{qid if qid is not None else i}",
                text=text,
                contract=contract,
                family=name,
                subcategory=str(meta.get("subject") or meta.get("skill") or meta.get("category") or ""),
                ground_truth=truth,
                initial_image=store.image(image) if image is not None else None,
                metadata=meta,
            )
        )
    return out


_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_PHRASES = re.compile(
    r"(?:final answer|the answer is|answer\s*:|correct (?:option|answer) is)\s*[:：]?\s*(.+)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?")


def extract_answer(reply: str, question: Question) -> str | None:
    """The final answer in a model reply: option letters for option questions, else a number or text."""
    m = _ANSWER_TAG.findall(reply)
    span = m[-1] if m else None
    if span is None:
        phrase = _PHRASES.findall(reply)
        span = phrase[-1] if phrase else reply
    span = span.strip()
    if not span:
        return None
    options = question.contract.options or []
    if question.contract.kind == "option" and options:
        multi = "," in str(question.ground_truth)
        letters = re.findall(r"(?:^|[\s(\[])([A-H])(?=$|[\s).,:;\]])", span)
        letters = [x for x in letters if LETTERS.index(x) < len(options)]
        if letters:
            return ",".join(sorted(set(letters))) if multi else letters[-1]
        for i, opt in enumerate(options):
            if opt.strip() and opt.strip().lower() in span.lower():
                return LETTERS[i]
        return None
    if question.metadata.get("answer_type") in ("integer", "float") or _NUMBER.fullmatch(
        str(question.ground_truth).replace(" ", "")
    ):
        nums = _NUMBER.findall(span)
        return nums[-1].replace(",", "") if nums else None
    return span.splitlines()[0].strip().rstrip(".")


def _number(text: str) -> float | None:
    text = text.replace(",", "").strip()
    try:
        if "/" in text:
            a, b = text.split("/", 1)
            return float(a) / float(b)
        return float(text)
    except (ValueError, ZeroDivisionError):
        return None


def score_reasoning(reply: str, question: Question) -> tuple[bool, str | None]:
    """``(correct, extracted answer)`` for a reply to a reasoning-benchmark question."""
    pred = extract_answer(reply, question)
    if pred is None:
        return False, None
    truth = str(question.ground_truth)
    if question.contract.kind == "option":
        return set(pred.split(",")) == set(truth.split(",")), pred
    t, p = _number(truth), _number(pred)
    if t is not None and p is not None:
        precision = question.metadata.get("precision")
        if precision not in (None, "", "nan"):
            digits = int(float(precision))
            return round(p, digits) == round(t, digits), pred
        return abs(p - t) <= 1e-2 * max(1.0, abs(t)), pred
    norm = lambda s: re.sub(r"[\s$]+", " ", s).strip().lower().rstrip(".")  # noqa: E731
    return norm(pred) == norm(truth), pred
