"""What a batch of AutoTool rollouts did: mode shares per question kind, valid calls, accuracy.

One definition for the numbers GRPO logs every step (``autotool/*`` in TRL's log history) and
the held-out evaluation of the learning run reports, so the two can be plotted side by side.
"""

from __future__ import annotations

from collections.abc import Sequence

from eviseek.autotool.parser import ParsedEpisode


def rollout_stats(
    episodes: Sequence[ParsedEpisode], correct: Sequence[bool], needs_zoom: Sequence[int | bool | None]
) -> dict[str, float]:
    """Shares over a batch, each left out when its denominator is empty.

    * ``accuracy``, ``accuracy_need_zoom``, ``accuracy_no_need``: correct answers;
    * ``tool_on_share`` (and ``_need_zoom`` / ``_no_need``): rollouts that declared ``<tool_on>``
      among all rollouts of that kind (an undeclared mode counts as not tool-on);
    * ``valid_call_rate``: tool-on rollouts with at least one zoom that returned a crop, among
      tool-on rollouts;
    * ``no_mode_share``: rollouts that declared no mode.

    ``needs_zoom`` is 1/True, 0/False, or -1/None when unknown (counted in the totals only).
    """
    out: dict[str, float] = {}

    def share(name: str, hits: list[bool]) -> None:
        if hits:
            out[name] = sum(hits) / len(hits)

    kinds = [None if z is None or int(z) < 0 else bool(int(z)) for z in needs_zoom]
    on = [ep.mode == "tool_on" for ep in episodes]
    share("accuracy", list(correct))
    share("tool_on_share", on)
    share("no_mode_share", [ep.mode is None for ep in episodes])
    share("valid_call_rate", [ep.n_valid_calls > 0 for ep, o in zip(episodes, on, strict=True) if o])
    for label, want in (("need_zoom", True), ("no_need", False)):
        idx = [i for i, k in enumerate(kinds) if k is want]
        share(f"accuracy_{label}", [bool(correct[i]) for i in idx])
        share(f"tool_on_share_{label}", [on[i] for i in idx])
    return out
