"""Each built-in environment id is one constant (eviseek.env_ids) that the env registry, the
Gymnasium table, the benchmarks and the environments all use."""

from __future__ import annotations

from eviseek import env_ids
from eviseek._gymnasium import GYMNASIUM_ENVS
from eviseek.envs import registered
from eviseek.eval.benchmark import benchmarks


def test_every_builtin_env_id_is_registered_and_named_by_its_constant() -> None:
    ids = {env_ids.TABLETOP, env_ids.HOUSE, env_ids.IMAGE_ZOOM, env_ids.ESIBENCH, env_ids.EXPRESS}
    assert ids <= set(registered())
    assert set(GYMNASIUM_ENVS) <= ids
    for benchmark in benchmarks().values():
        assert benchmark.env_id is None or benchmark.env_id in ids, benchmark.name
    assert benchmarks()["house"].env_id is env_ids.HOUSE
    assert benchmarks()["tabletop"].env_id is env_ids.TABLETOP
    from eviseek.envs.house.questions import ENV_ID as HOUSE_QUESTIONS
    from eviseek.envs.tabletop.generate import ENV_ID as TABLETOP_QUESTIONS

    assert HOUSE_QUESTIONS is env_ids.HOUSE and TABLETOP_QUESTIONS is env_ids.TABLETOP
