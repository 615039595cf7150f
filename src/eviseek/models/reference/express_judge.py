"""The reference policy playing EXPRESS-Bench's answer judge (stage ``express_judge``).

A TEXT RULE, not a vision judge (ours, so the protocol runs end to end without a key): the answer
score compares the agent's reply with the reference answer word by word, and the grounding grade
follows the score when an image was shown (0 without one). It never looks at the pixels, so its
grounding says nothing about what the image shows; use a real model for reported numbers.
"""

from __future__ import annotations

from typing import Any

from eviseek.answers import normalize_text, parse_integer, parse_yes_no

RULE = "reference text rule (compares the reply with the reference answer; ignores the image)"
_FILLER = frozenset("a an the is are it its there of in on to and or".split())


def text_score(reference: str, response: str) -> int:
    """1..5 from the overlap of the reply with the reference answer."""
    ref, resp = normalize_text(reference), normalize_text(response)
    if not resp:
        return 1
    if resp == ref:
        return 5
    yes_no = parse_yes_no(ref)
    if yes_no is not None and ref in ("yes", "no"):
        return 5 if parse_yes_no(resp) == yes_no else 1
    ref_n, resp_n = parse_integer(ref), parse_integer(resp)
    if ref_n is not None and ref.isdigit():
        if resp_n == ref_n:
            return 5
        return 2 if resp_n is not None and abs(resp_n - ref_n) == 1 else 1
    want = {w for w in ref.split() if w not in _FILLER} or set(ref.split())
    got = set(resp.split())
    shared = len(want & got) / len(want)
    if shared == 1.0:
        return 5
    if shared >= 0.5:
        return 3
    return 2 if shared > 0 else 1


def express_judge_reply(metadata: dict[str, Any], n_images: int) -> dict[str, Any]:
    """The judge's JSON reply for one request."""
    score = text_score(str(metadata.get("reference_answer", "")), str(metadata.get("response", "")))
    grounding = (1.0 if score >= 4 else 0.5 if score >= 2 else 0.0) if n_images else 0.0
    return {"reason": RULE, "grounding": grounding, "score": score}
