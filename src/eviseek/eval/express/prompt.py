"""Which prompt the EXPRESS judge is asked with: EXPRESS-Bench's own, or eviseek's.

EXPRESS-Bench ships its judge prompt as ``prompt/evaluation.txt`` in its repository
(HCPLab-SYSU/EXPRESS-Bench). eviseek does not copy it: with ``eviseek judge --protocol express
--express-root DIR`` it is read from the user's checkout at grading time. Its layout, as
EXPRESS-Bench's ``gpt.py`` reads it: a ``[system]:`` line, the system text on the next line, a
``[user]:`` line, then the user text, to which the episode is appended as ``Question: ...``,
``Answer: ...``, ``Response: ...`` and ``Your mark: `` lines; the image goes after the text. The
reply it asks for is ``"<grounding>, <score>"``. Without ``--express-root`` the judge uses
eviseek's own prompt (``templates/express_judge.j2``), which asks the same two grades as JSON.
Each grade names the prompt it was given (:attr:`JudgePrompt.label`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel

from eviseek.errors import EviseekError, SettingError

PROMPT_PATH = "prompt/evaluation.txt"
"""Where EXPRESS-Bench keeps its judge prompt, under the repository's root."""
MAX_PROMPT_BYTES = 256 * 2**10
"""A judge prompt larger than this is not EXPRESS-Bench's (its own is about 3 KB; ours)."""


class ExpressPromptMissing(EviseekError):
    """``--express-root`` names no EXPRESS-Bench checkout with a judge prompt (exit code 1)."""


class ExpressPromptInvalid(SettingError):
    """The judge prompt file is there but does not have EXPRESS-Bench's layout (exit code 2)."""


class JudgePrompt(BaseModel):
    """The prompt the EXPRESS judge is given."""

    source: str = "eviseek"
    """``express-bench`` (read from a checkout) or ``eviseek`` (ours, the fallback)."""
    path: str = ""
    sha256: str = ""
    """Of the file read (empty for eviseek's)."""
    system: str = ""
    user: str = ""

    @property
    def label(self) -> str:
        """How a grade names its prompt: ``express-bench:prompt/evaluation.txt@<sha256[:12]>``
        or ``eviseek``."""
        return (
            f"express-bench:{PROMPT_PATH}@{self.sha256[:12]}" if self.source == "express-bench" else "eviseek"
        )

    def user_text(self, question: str, answer: str, response: str) -> str:
        """The user message's text for one episode, laid out as EXPRESS-Bench appends it."""
        return f"{self.user}Question: {question}\nAnswer: {answer}\nResponse: {response}\nYour mark: "


def load_express_prompt(root: str | Path) -> JudgePrompt:
    """EXPRESS-Bench's judge prompt from the checkout at ``root``.

    Raises :class:`ExpressPromptMissing` when ``root`` or its ``prompt/evaluation.txt`` is not
    there, and :class:`ExpressPromptInvalid` when the file does not read as that prompt.
    """
    base = Path(root).expanduser()
    if not base.is_dir():
        raise ExpressPromptMissing(
            f"--express-root {root} is not a folder; give the root of a checkout of "
            "HCPLab-SYSU/EXPRESS-Bench (git clone https://github.com/HCPLab-SYSU/EXPRESS-Bench)"
        )
    path = base / PROMPT_PATH
    if not path.is_file():
        raise ExpressPromptMissing(
            f"no judge prompt at {path}; --express-root must be the root of an EXPRESS-Bench checkout "
            f"(it keeps the prompt in {PROMPT_PATH}), or leave the flag out to use eviseek's prompt"
        )
    data = path.read_bytes()[: MAX_PROMPT_BYTES + 1]
    if len(data) > MAX_PROMPT_BYTES:
        raise ExpressPromptInvalid(
            f"{path} is over {MAX_PROMPT_BYTES // 1024} KB: not EXPRESS-Bench's judge prompt"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ExpressPromptInvalid(f"{path} is not UTF-8 text: not EXPRESS-Bench's judge prompt") from None
    lines = text.splitlines(keepends=True)
    why = _layout_problem(lines)
    if why is not None:
        raise ExpressPromptInvalid(
            f"{path} does not read as EXPRESS-Bench's judge prompt: {why} (expected a '[system]:' line, "
            "the system text, a '[user]:' line, then the user text)"
        )
    user = "".join(lines[3:])
    return JudgePrompt(
        source="express-bench",
        path=str(path),
        sha256=hashlib.sha256(data).hexdigest(),
        system=lines[1].strip(),
        user=user if user.endswith("\n") else user + "\n",
    )


def _layout_problem(lines: list[str]) -> str | None:
    if len(lines) < 4:
        return f"it has {len(lines)} line(s), fewer than 4"
    if lines[0].strip().lower() != "[system]:":
        return f"line 1 is {lines[0].strip()[:40]!r}, not '[system]:'"
    if not lines[1].strip():
        return "line 2 (the system text) is empty"
    if lines[2].strip().lower() != "[user]:":
        return f"line 3 is {lines[2].strip()[:40]!r}, not '[user]:'"
    if not "".join(lines[3:]).strip():
        return "the user text after '[user]:' is empty"
    return None
