"""``eviseek benchmarks list``: what is registered and where from (a plugin's file included)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from eviseek.cli.main import app


def test_benchmarks_list_names_each_benchmark_and_its_origin(tmp_path: Path) -> None:
    plugin = tmp_path / "listed_bench.py"
    plugin.write_text(
        "from eviseek.eval.benchmark import register_benchmark\n"
        "register_benchmark('listedbench', lambda arg: [], env_id='eviseek/Tabletop-v0', budget=9)\n",
        encoding="utf-8",
    )
    res = CliRunner().invoke(app, ["benchmarks", "list", "--json", "--plugin", str(plugin)])
    assert res.exit_code == 0, res.output
    rows = {row["name"]: row for row in json.loads(res.output)}
    assert (
        rows["house"]["budget"] == 120 and rows["house"]["registered_by"] == "eviseek.eval.benchmarks.house"
    )
    assert rows["esibench"]["scoring"] == "esibench:paper | esibench:official"
    mine = rows["listedbench"]
    assert (mine["env_id"], mine["budget"], mine["scoring"]) == ("eviseek/Tabletop-v0", 9, "contract")
    assert str(plugin.resolve()) in mine["registered_by"]

    table = CliRunner().invoke(app, ["benchmarks", "list"])
    assert table.exit_code == 0 and "listedbench" in table.output and "eviseek/House-v0" in table.output
