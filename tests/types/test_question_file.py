"""The one questions.jsonl module: every reader gets the same errors, writes are atomic, and the
digest is the hash of the written file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from eviseek.errors import ConfigError
from eviseek.types import Image, Question
from eviseek.types.question_file import (
    QUESTIONS_FILE,
    questions_digest,
    read_questions,
    read_questions_by_id,
    write_questions,
)


def _questions() -> list[Question]:
    arr = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)
    return [
        Question(id="a", text="how many?", initial_image=Image.from_array(arr)),
        Question(id="b", text="which colour?"),
    ]


@pytest.mark.parametrize("image_dir", ["question_images", "images"])
def test_the_digest_is_the_hash_of_the_written_file(tmp_path: Path, image_dir: str) -> None:
    qs = _questions()
    digest = write_questions(tmp_path, qs, image_dir=image_dir)
    written = (tmp_path / QUESTIONS_FILE).read_bytes()
    assert digest == hashlib.sha256(written).hexdigest() == questions_digest(qs, image_dir=image_dir)
    assert [p.parent.name for p in tmp_path.rglob("*.png")] == [image_dir]
    assert not list(tmp_path.glob("*.tmp"))  # written through a temporary file, then renamed
    assert qs[0].initial_image is not None and qs[0].initial_image.path is None  # callers' copies untouched
    back = read_questions(tmp_path)  # a directory or the file itself
    assert [q.id for q in back] == ["a", "b"] and read_questions_by_id(tmp_path / QUESTIONS_FILE).keys() == {
        "a",
        "b",
    }
    assert back[0].initial_image is not None and Path(back[0].initial_image.path or "").is_absolute()
    assert np.array_equal(back[0].initial_image.array(), qs[0].initial_image.array())


def test_path_backed_images_are_copied_without_loading_the_callers_questions(tmp_path: Path) -> None:
    # A benchmark of large images is read from disk one record at a time; the caller's questions
    # keep their images unloaded (otherwise every image of the set would stay in memory).
    src = tmp_path / "src"
    write_questions(src, _questions())
    qs = read_questions(src)
    assert qs[0].initial_image is not None and not qs[0].initial_image.loaded
    digest = questions_digest(qs)
    assert write_questions(tmp_path / "run", qs) == digest
    assert not qs[0].initial_image.loaded
    (back, _) = read_questions(tmp_path / "run")
    assert back.initial_image is not None and np.array_equal(
        back.initial_image.array(), qs[0].initial_image.array()
    )


def test_without_an_image_folder_records_keep_their_paths(tmp_path: Path) -> None:
    q = Question(id="p", text="?", initial_image=Image(path="/data/big.png", width=4, height=4))
    write_questions(tmp_path, [q], image_dir=None)
    assert not list(tmp_path.rglob("*.png"))
    (back,) = read_questions(tmp_path)
    assert back.initial_image is not None and back.initial_image.path == "/data/big.png"


def test_every_problem_names_the_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no question file at .*nothing\.jsonl; write one with"):
        read_questions(tmp_path / "nothing.jsonl")
    with pytest.raises(ConfigError, match=r"; run eval first$"):
        read_questions(tmp_path, missing_hint="run eval first")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "text": "?"}\n\n{oops\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:3: not valid JSON"):
        read_questions(bad)
    bad.write_text('{"id": "x"}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:1: not a Question record \(text: Field required\)"):
        read_questions(bad)
