"""The one taxonomy table: every ESI-Bench record, every tabletop family and every house kind maps
into it, and every consumer agrees with it."""

from __future__ import annotations

import inspect
import json
from collections import Counter
from pathlib import Path

from eviseek.types import taxonomy
from eviseek.types.taxonomy import FAMILIES, PAPER_TOTAL, SUBCATEGORIES, TASK_MODULES, find, min_steps
from tests.eval.esibench.official import esibench_root, load_official

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "esibench" / "dataset" / "json_clean"


def _records(root: Path) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.glob("*/*/*/*/*.json"))]


def test_table_matches_the_paper() -> None:
    assert len(SUBCATEGORIES) == 29 and len(FAMILIES) == 10 and len(TASK_MODULES) == 19
    assert sum(s.paper_questions for s in SUBCATEGORIES) == PAPER_TOTAL
    assert len({s.key for s in SUBCATEGORIES}) == 29 and len({s.slug for s in SUBCATEGORIES}) == 29
    # Table 5's family order.
    assert FAMILIES[6:] == (
        "Cognitive Mapping",
        "Enumerative Perception",
        "Temporal Understanding",
        "Action Sequencing",
    )


def test_counting_w_occlusion_gets_the_minimum_in_both_spellings() -> None:
    for name in ("Counting w Occlusion", "Counting with Occlusion", "counting_with_occlusion"):
        assert min_steps(name, "Enumerative Perception") == 3
        assert min_steps(name) == 3
    # The Specular Reflection subcategory called Spatial Relations honours it; the family does not.
    assert min_steps("Spatial Relations", "Specular Reflection") == 3
    assert min_steps("Spatial Relations") == 0
    assert min_steps("Linear Alignment", "Spatial Relations") == 0
    assert min_steps("something else") == 0
    from eviseek.agents.esibench_stopping import esibench_min_steps

    assert esibench_min_steps("Counting w Occlusion", "Enumerative Perception") == 3


def test_every_tabletop_family_and_house_kind_is_in_the_table() -> None:
    from eviseek.envs.house.questions import KINDS
    from eviseek.envs.tabletop.families import all_families
    from eviseek.envs.tabletop.paper_split import HOUSE_ONLY, PAPER_QUESTIONS

    tabletop = {s.slug for s in SUBCATEGORIES if s.where == "tabletop"}
    fams = all_families()
    assert {f.slug for f in fams} == tabletop == set(PAPER_QUESTIONS)
    for fam in fams:
        row = taxonomy.by_slug(fam.slug)
        assert row is not None and (row.family, row.display) == (fam.family, fam.subcategory)
        assert find(fam.subcategory, fam.family) is row
    # Splits list families in the table's order.
    assert [f.family for f in fams] == sorted((f.family for f in fams), key=FAMILIES.index)
    mapping = {slug: v for slug, v in KINDS.items() if v[0] == "Cognitive Mapping"}
    assert {s.slug for s in SUBCATEGORIES if s.where == "house"} == set(mapping)
    for slug, (family, name, _) in mapping.items():
        row = taxonomy.by_slug(slug)
        assert row is not None and (row.family, row.name) == (family, name)
    assert set(HOUSE_ONLY) == {s.name for s in SUBCATEGORIES if s.where == "house"}


def test_the_fixture_records_map_into_the_table() -> None:
    for rec in _records(FIXTURES):
        row = find(rec["small_task"], rec["big_task"])
        assert row is not None, (rec["big_task"], rec["small_task"])
        assert row.task == rec["runner_task"]


def test_every_public_record_maps_into_the_table() -> None:
    """With ESI_BENCH_ROOT: each record's big_task/small_task names a row served by its runner_task,
    every row has records, and each module's should_stop applies --min-steps exactly when the
    table says so."""
    root = esibench_root()
    records = _records(root / "dataset" / "json_clean")
    assert len(records) == 3502
    seen: Counter[str] = Counter()
    for rec in records:
        row = find(rec["small_task"], rec["big_task"])
        assert row is not None, (rec["big_task"], rec["small_task"])
        assert (row.family, row.name, row.task) == (rec["big_task"], rec["small_task"], rec["runner_task"])
        seen[row.key] += 1
    assert set(seen) == {s.key for s in SUBCATEGORIES}
    _, tasks = load_official(root)
    assert set(tasks) == set(TASK_MODULES)
    for name, module in tasks.items():
        body = inspect.getsource(module.should_stop).split("]:\n", 1)[1]  # past the signature
        honours = "min_steps" in body
        rows = [s for s in SUBCATEGORIES if s.task == name]
        assert rows and all(s.honours_min_steps == honours for s in rows), name
