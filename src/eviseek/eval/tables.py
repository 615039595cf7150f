"""The paper's table shapes, built once and rendered as Markdown or HTML.

A :class:`Table` holds formatted cells (bold marks the best system per run, as the paper bolds
the best result per backbone). Builders take the numbers computed in :mod:`eviseek.eval.metrics`
and :mod:`eviseek.eval.stats`; they do no statistics themselves.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

from eviseek.eval.metrics import AccuracyRow, ResourceUsage, SupportRow, SystemResults
from eviseek.eval.stats import PairedTest

NA = "n/a"


@dataclass
class Cell:
    """One formatted table cell."""

    text: str
    bold: bool = False
    numeric: bool = True

    def html_text(self) -> str:
        """The text escaped for HTML."""
        return html.escape(self.text)


@dataclass
class Table:
    """A titled table: column labels, optional run groups over them, and rows of cells."""

    key: str
    title: str
    caption: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    """Per row: ``row``, ``section`` (a heading spanning the table) or ``total``."""
    groups: list[tuple[str, int]] = field(default_factory=list)
    """(run label, number of columns) spans over the system columns, after ``lead`` columns."""
    lead: int = 0
    short_columns: list[str] = field(default_factory=list)
    """Column labels to show under the group header (HTML); Markdown keeps ``columns``."""

    def add(self, cells: list[Cell], kind: str = "row") -> None:
        """Append a row."""
        self.rows.append(cells)
        self.kinds.append(kind)

    def section(self, text: str) -> None:
        """Append a heading row (e.g. a task family above its subcategories)."""
        self.add([Cell(text, numeric=False)], "section")

    # -------------------------------------------------------------- rendering

    def markdown(self) -> str:
        """GitHub-flavoured Markdown (bold with ``**``; section rows in italics)."""
        out = [f"### {self.title}", ""]
        out.append("| " + " | ".join(_md(c) for c in self.columns) + " |")
        out.append("|" + "|".join("---:" if i >= 1 else "---" for i in range(len(self.columns))) + "|")
        for cells, kind in zip(self.rows, self.kinds, strict=True):
            if kind == "section":
                out.append("| *" + _md(cells[0].text) + "* |" + " |" * (len(self.columns) - 1))
                continue
            texts = [
                f"**{_md(c.text)}**" if c.bold or (kind == "total" and i == 0) else _md(c.text)
                for i, c in enumerate(cells)
            ]
            out.append("| " + " | ".join(texts) + " |")
        if self.caption:
            out += ["", self.caption]
        return "\n".join(out) + "\n"

    def html(self) -> str:
        """An HTML ``<table>`` (styles come from the page's inline stylesheet)."""
        e = html.escape
        parts = [f'<table class="paper" id="{e(self.key)}"><caption>{e(self.title)}</caption><thead>']
        if self.groups and any(n > 0 for _, n in self.groups):
            parts.append("<tr>" + "".join(f'<th rowspan="2">{e(c)}</th>' for c in self.columns[: self.lead]))
            parts.append("".join(f'<th colspan="{n}" class="group">{e(g)}</th>' for g, n in self.groups if n))
            parts.append("</tr><tr>")
            shown = self.short_columns[self.lead :] if self.short_columns else self.columns[self.lead :]
            parts.append("".join(f"<th>{e(c)}</th>" for c in shown) + "</tr>")
        else:
            parts.append("<tr>" + "".join(f"<th>{e(c)}</th>" for c in self.columns) + "</tr>")
        parts.append("</thead><tbody>")
        for cells, kind in zip(self.rows, self.kinds, strict=True):
            if kind == "section":
                parts.append(
                    f'<tr class="section"><td colspan="{len(self.columns)}">{e(cells[0].text)}</td></tr>'
                )
                continue
            tds = []
            for c in cells:
                cls = "num" if c.numeric else "txt"
                inner = f"<b>{c.html_text()}</b>" if c.bold else c.html_text()
                tds.append(f'<td class="{cls}">{inner}</td>')
            parts.append(f'<tr class="{kind}">' + "".join(tds) + "</tr>")
        parts.append("</tbody></table>")
        if self.caption:
            parts.append(f'<p class="caption">{e(self.caption)}</p>')
        return "".join(parts)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# ------------------------------------------------------------------- formatting


def fmt(value: float | None, digits: int = 1) -> str:
    """A number with ``digits`` decimals, or ``n/a``."""
    return NA if value is None else f"{value:.{digits}f}"


def fmt_int(value: float | None) -> str:
    """A mean count with thousands separators (tokens), or ``n/a``."""
    return NA if value is None else f"{value:,.0f}"


def fmt_signed(value: float, digits: int = 2) -> str:
    """A signed difference, e.g. ``+7.10``."""
    return f"{value:+.{digits}f}"


def fmt_p(p: float | None) -> str:
    """A p value as the paper prints it (``<0.001`` below one in a thousand)."""
    if p is None:
        return NA
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _n_text(ns: Sequence[int]) -> str:
    values = sorted(set(ns))
    if not values:
        return "0"
    return str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}"


def _bold_best(values: list[float | None], systems: Sequence[SystemResults]) -> list[bool]:
    """Bold the highest value within each run (the paper's "best per backbone")."""
    flags = [False] * len(values)
    for run in dict.fromkeys(s.run for s in systems):
        idx = [i for i, s in enumerate(systems) if s.run == run and values[i] is not None]
        if len(idx) < 2:
            continue
        best = max(values[i] for i in idx)  # type: ignore[type-var]
        for i in idx:
            if values[i] is not None and abs(values[i] - best) < 1e-9:  # type: ignore[operator]
                flags[i] = True
    return flags


def _groups(systems: Sequence[SystemResults]) -> list[tuple[str, int]]:
    runs = list(dict.fromkeys(s.run for s in systems))
    if len(runs) < 2:
        return []
    return [(run, sum(1 for s in systems if s.run == run)) for run in runs]


def _system_table(
    key: str, title: str, caption: str, lead: list[str], systems: Sequence[SystemResults]
) -> Table:
    return Table(
        key=key,
        title=title,
        caption=caption,
        columns=lead + [s.label for s in systems],
        groups=_groups(systems),
        lead=len(lead),
        short_columns=lead + [s.agent for s in systems],
    )


def _row_kind(level: str) -> str:
    return "total" if level == "overall" else "row"


def _add_accuracy_row(t: Table, r: AccuracyRow, systems: Sequence[SystemResults]) -> None:
    """Name, #Q and one accuracy per system (best per run in bold)."""
    vals = [r.acc[s.label] for s in systems]
    bold = _bold_best(vals, systems)
    cells = [Cell(r.name, numeric=False), Cell(_n_text([r.n[s.label] for s in systems]))]
    cells += [Cell(fmt(v), b) for v, b in zip(vals, bold, strict=True)]
    t.add(cells, _row_kind(r.level))


# ---------------------------------------------------------------------- builders


def family_accuracy_table(rows: Sequence[AccuracyRow], systems: Sequence[SystemResults]) -> Table:
    """Table 1: accuracy (%) per task family and overall, #Q per family, best per run in bold."""
    t = _system_table(
        "accuracy-family",
        "Accuracy by task family (%)",
        "#Q is the number of questions; Overall is question-weighted. Missing answers and failed "
        "episodes count as incorrect. Bold marks the best agent per run.",
        ["Category", "#Q"],
        systems,
    )
    for r in rows:
        if r.level != "subcategory":
            _add_accuracy_row(t, r, systems)
    return t


def subcategory_accuracy_table(rows: Sequence[AccuracyRow], systems: Sequence[SystemResults]) -> Table:
    """Table 5: accuracy (%) per subcategory under family headings, and overall."""
    t = _system_table(
        "accuracy-subcategory",
        "Accuracy by subcategory (%)",
        "#Q is the subcategory size; Overall is question-weighted. Bold marks the best agent per run.",
        ["Subcategory", "#Q"],
        systems,
    )
    for r in rows:
        if r.level == "family":
            t.section(r.family)
        else:
            _add_accuracy_row(t, r, systems)
    return t


def is_blind(system: SystemResults) -> bool:
    """Whether ``system`` is the question-only ``blind`` agent (with or without options)."""
    return system.agent.split(":")[0] == "blind"


def blind_subcategory_table(rows: Sequence[AccuracyRow], systems: Sequence[SystemResults]) -> Table:
    """Exact and soft scores (%) per subcategory, the ``blind`` agent's first, beside every
    agent's: what the question alone earns, where the soft score gives partial credit."""
    ordered = [s for s in systems if is_blind(s)] + [s for s in systems if not is_blind(s)]
    columns = ["Subcategory", "#Q"]
    for s in ordered:
        columns += [f"{s.label} exact", f"{s.label} soft"]
    t = Table(
        key="blind-subcategory",
        title="Blind baseline beside every agent, by subcategory (%)",
        caption="Exact: the binary verdict of every other table. Soft: the task's own score, "
        "which gives counts partial credit (ESI-Bench's); Blind answers from the question alone, "
        "so its soft score is what a guess earns there.",
        columns=columns,
        lead=2,
    )
    for r in rows:
        if r.level == "family":
            t.section(r.family)
            continue
        cells = [Cell(r.name, numeric=False), Cell(_n_text([r.n[s.label] for s in ordered]))]
        for s in ordered:
            cells += [Cell(fmt(r.acc[s.label])), Cell(fmt(r.soft.get(s.label)))]
        t.add(cells, _row_kind(r.level))
    return t


def decomposition_table(rows: Sequence[SupportRow], systems: Sequence[SystemResults]) -> Table:
    """Figure 2 as numbers: Acc, C, GW, P, N and C+GW per system (overall)."""
    t = Table(
        key="support-decomposition",
        title="Correctness and visual-support decomposition (%)",
        caption="C and GW are support-weighted correct and incorrect mass; P = Acc − C and "
        "N = 100 − Acc − GW are the residuals; C + GW + P + N = 100. Graded: questions whose "
        "answer-time images have a support grade (parts are over those; n/a when none).",
        columns=["System", "Acc", "C", "GW", "P", "N", "C+GW", "Graded"],
    )
    overall = next(r for r in rows if r.level == "overall")
    for s in systems:
        d = overall.parts[s.label]
        both = None if d.C is None or d.GW is None else d.C + d.GW
        graded = f"{d.n_graded}/{d.n}"
        t.add(
            [Cell(s.label, numeric=False)]
            + [Cell(fmt(v, 2)) for v in (d.acc, d.C, d.GW, d.P, d.N, both)]
            + [Cell(graded if d.complete else f"{graded} ({'partial' if d.available else 'none'})")]
        )
    return t


def support_subcategory_table(rows: Sequence[SupportRow], systems: Sequence[SystemResults]) -> Table:
    """Table 6: support-weighted accuracy C (%) per subcategory, and overall."""
    t = _system_table(
        "support-subcategory",
        "Visual-support-weighted accuracy C by subcategory (%)",
        "Correct answers weighted by answer-time visual support (0, 0.5 or 1). n/a: no support "
        "grade in that slice; a value marked † covers only the graded questions.",
        ["Subcategory", "#Q"],
        systems,
    )
    for r in rows:
        if r.level == "family":
            t.section(r.family)
            continue
        parts = [r.parts[s.label] for s in systems]
        vals = [p.C for p in parts]
        bold = _bold_best(vals, systems)
        cells = [Cell(r.name, numeric=False), Cell(_n_text([p.n for p in parts]))]
        for p, b in zip(parts, bold, strict=True):
            text = fmt(p.C, 2)
            if p.available and not p.complete:
                text += "†"
            cells.append(Cell(text, b))
        t.add(cells, _row_kind(r.level))
    return t


def resource_table(usage: dict[str, ResourceUsage], systems: Sequence[SystemResults]) -> Table:
    """Table 2: mean steps, calls, tokens and answer images per episode (plus token split and time)."""
    t = Table(
        key="resources",
        title="Mean resource use per episode",
        caption="Steps are primitive environment actions; calls are model calls of every stage; "
        "tokens are input + output + reasoning, each shown apart (the paper's count; reasoning "
        "is the server's separately reported thinking, never counted twice). Images are the "
        "distinct images attached to the answering call. Means are over recorded episodes (failed ones "
        "included); token means only over episodes whose server reported usage.",
        columns=[
            "Method",
            "Steps",
            "Calls",
            "Tokens",
            "Input",
            "Output",
            "Reasoning",
            "Images",
            "Wall (s)",
            "Episodes",
        ],
    )
    multi = len({s.run for s in systems}) > 1
    current = None
    for s in systems:
        if multi and s.run != current:
            t.section(s.run)
            current = s.run
        u = usage[s.label]
        eps = f"{u.n_episodes}/{u.n_questions}"
        if u.n_failed:
            eps += f" ({u.n_failed} failed)"
        if u.tokens_known and u.tokens_known < u.n_episodes:
            eps += f"; tokens known for {u.tokens_known}"
        t.add(
            [
                Cell(s.agent if multi else s.label, numeric=False),
                Cell(fmt(u.steps, 2)),
                Cell(fmt(u.calls, 2)),
                Cell(fmt_int(u.tokens)),
                Cell(fmt_int(u.input_tokens)),
                Cell(fmt_int(u.output_tokens)),
                Cell(fmt_int(u.reasoning_tokens)),
                Cell(fmt(u.images, 2)),
                Cell(fmt(u.wall_time_s, 1)),
                Cell(eps),
            ]
        )
    return t


def step_cost_table(
    usage: dict[str, ResourceUsage], accuracy: dict[str, float | None], systems: Sequence[SystemResults]
) -> Table:
    """The shape of the paper's Table 10 (intent ablation): accuracy, tokens per executed
    environment step and mean exploration length, plus steps per decision."""
    t = Table(
        key="step-cost",
        title="Cost per step",
        caption="Acc is accuracy (%); tokens/step is total tokens (input + output + reasoning) over "
        "executed environment steps; Expl. steps is the mean number of executed steps; "
        "steps/decision is executed steps over decision calls (seek, Single-model step, frontier "
        "check).",
        columns=["Method", "Acc", "Tokens / step", "Expl. steps", "Steps / decision"],
    )
    multi = len({s.run for s in systems}) > 1
    current = None
    for s in systems:
        if multi and s.run != current:
            t.section(s.run)
            current = s.run
        u = usage[s.label]
        t.add(
            [
                Cell(s.agent if multi else s.label, numeric=False),
                Cell(fmt(accuracy.get(s.label), 2)),
                Cell(fmt_int(u.tokens_per_step)),
                Cell(fmt(u.steps, 1)),
                Cell(fmt(u.steps_per_decision, 2)),
            ]
        )
    return t


def comparison_table(
    tests: Sequence[PairedTest], confidence: float, n_resamples: int, seed: int, *, family: str = ""
) -> Table:
    """Table 9: accuracy difference A − B with bootstrap CI, n+/n−, exact McNemar p and Holm."""
    pct = f"{100 * confidence:g}%"
    t = Table(
        key="paired",
        title="Paired comparisons",
        caption=f"Δ = accuracy of A − accuracy of B (pp) on the questions both were evaluated on, with "
        f"pointwise paired-bootstrap {pct} percentile CIs ({n_resamples:,} resamples of question "
        f"ids, seed {seed}). n+/n− count questions correct only for A / only for B. p: two-sided "
        f"exact McNemar; Holm-corrected across the {len(tests)} comparison(s) shown"
        + (f" (family: {family})." if family else "."),
        columns=["A", "B", "#Q", "Acc A", "Acc B", "Δ", f"{pct} CI", "n+/n−", "p", "p (Holm)"],
    )
    for r in tests:
        t.add(
            [
                Cell(r.a, numeric=False),
                Cell(r.b, numeric=False),
                Cell(str(r.n)),
                Cell(fmt(r.acc_a, 2)),
                Cell(fmt(r.acc_b, 2)),
                Cell(fmt_signed(r.delta)),
                Cell(f"[{fmt_signed(r.low)}, {fmt_signed(r.high)}]"),
                Cell(f"{r.n_plus}/{r.n_minus}"),
                Cell(fmt_p(r.p)),
                Cell(fmt_p(r.p_holm), bold=r.p_holm is not None and r.p_holm < 0.05),
            ]
        )
    return t


def status_table(
    usage: dict[str, ResourceUsage],
    scores: dict[str, float | None],
    support_sources: dict[str, dict[str, int]],
    systems: Sequence[SystemResults],
) -> Table:
    """How every question ended per system, the mean task score, and where support came from."""
    t = Table(
        key="status",
        title="Episode outcomes",
        caption="answered: a scored answer; no answer: nothing parseable; unscored: no verdict "
        "could be computed; failed: the episode raised; missing: never recorded. All but "
        "answered count as incorrect. Score: mean task score (soft for counting), in %. "
        "Support: recorded episodes graded by the environment / by the judge / failed before "
        "any answer-time image (support 0) / not graded.",
        columns=[
            "System",
            "Answered",
            "No answer",
            "Unscored",
            "Failed",
            "Missing",
            "Score",
            "Support (env/judge/empty/none)",
        ],
    )
    for s in systems:
        c = usage[s.label].status_counts
        src = support_sources.get(s.label, {})
        t.add(
            [
                Cell(s.label, numeric=False),
                *(Cell(str(c.get(k, 0))) for k in ("answered", "no_answer", "unscored", "failed", "missing")),
                Cell(fmt(scores.get(s.label), 1)),
                Cell("/".join(str(src.get(k, 0)) for k in ("environment", "judge", "empty", "none"))),
            ]
        )
    return t
