"""Loading question sets from files, directories and named splits."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eviseek.errors import ConfigError
from eviseek.eval.datasets import load_dataset, questions_digest, read_questions, write_questions
from eviseek.types import Image, Question
from tests.eval.toy_plugin import make_questions, write_questions_jsonl


def test_jsonl_file_and_directory(tmp_path: Path) -> None:
    qs = make_questions(5)
    write_questions_jsonl(tmp_path / "questions.jsonl", qs)
    assert [q.id for q in load_dataset(str(tmp_path / "questions.jsonl"))] == [q.id for q in qs]
    assert load_dataset(str(tmp_path)) == load_dataset(str(tmp_path / "questions.jsonl"))


def test_bad_specs_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown dataset 'nope'.*tabletop:<split>"):
        load_dataset("nope:dev")
    with pytest.raises(ConfigError, match="neither an existing file"):
        load_dataset(str(tmp_path / "missing.jsonl"))
    with pytest.raises(ConfigError, match=r"no questions\.jsonl"):
        load_dataset(str(tmp_path))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(make_questions(1)[0].model_dump(mode="json")) + "\n{oops\n")
    with pytest.raises(ConfigError, match=r"bad.jsonl:2: not valid JSON"):
        load_dataset(str(bad))
    bad.write_text(json.dumps({"id": "x"}) + "\n")
    with pytest.raises(ConfigError, match=r"bad.jsonl:1: not a Question record \(text: Field required\)"):
        load_dataset(str(bad))
    dup = write_questions_jsonl(tmp_path / "dup.jsonl", make_questions(2) + make_questions(1))
    with pytest.raises(ConfigError, match="'q000' appears more than once"):
        load_dataset(str(dup))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(ConfigError, match="holds no questions"):
        load_dataset(str(empty))


def test_images_travel_with_the_questions(tmp_path: Path) -> None:
    src = tmp_path / "src"
    arr = np.random.default_rng(0).integers(0, 255, (6, 9, 3), dtype=np.uint8)
    img = Image.from_array(arr)
    img.save(src, "imgs")
    q = Question(id="img1", text="what?", reference_images=[Image(path=img.path, width=9, height=6)])
    (src / "questions.jsonl").write_text(q.model_dump_json() + "\n")
    (loaded,) = load_dataset(str(src))
    assert Path(loaded.reference_images[0].path or "").is_absolute()
    run = tmp_path / "run"
    digest = write_questions(run, [loaded])
    assert digest == questions_digest([loaded])
    (back,) = read_questions(run / "questions.jsonl")
    assert str(back.reference_images[0].path).startswith(str(run.resolve()))
    assert np.array_equal(back.reference_images[0].array(), arr)
    # The copy makes the run directory independent of the source folder.
    for f in (src / "imgs").iterdir():
        f.unlink()
    (again,) = read_questions(run / "questions.jsonl")
    assert np.array_equal(again.reference_images[0].array(), arr)


def test_tabletop_split_loads_lazily() -> None:
    qs = load_dataset("tabletop:dev")
    assert qs and all(q.env_id for q in qs)


def test_house_splits_load_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVISEEK_CACHE_DIR", str(tmp_path))
    qs = load_dataset("house:dev")
    assert qs and all(q.env_id == "eviseek/House-v0" for q in qs)
    with pytest.raises(ConfigError, match="unknown house split"):
        load_dataset("house:train")
