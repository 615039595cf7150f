"""The evaluation runner in-process: failures, timeouts, resume, worker processes, re-scoring."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from eviseek.errors import ConfigError, EviseekError, PluginError
from eviseek.eval.config import RunConfig
from eviseek.eval.runner import _first_failure_or_all_done, episode_seed, evaluate, run_eval
from eviseek.eval.scoring import rescore_run, summarize
from eviseek.eval.store import ResultsStore, episode_dir, load_results
from eviseek.types import Trajectory
from tests.eval import toy_plugin
from tests.eval.toy_plugin import make_questions, write_questions_jsonl

PLUGIN = str(Path(toy_plugin.__file__).resolve())


def _config(dataset: Path, **kw: object) -> RunConfig:
    base: dict[str, object] = {
        "agents": ["toy-seeker", "toy-passive"],
        "model": "toy/oracle",
        "dataset": str(dataset),
        "env_workers": 0,
        "concurrency": 4,
        "timeout_s": 5.0,
        "plugins": [PLUGIN],
    }
    base.update(kw)
    return RunConfig.model_validate(base)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    special = {
        "q002": {"agent_crash": True},
        "q004": {"scene": {"env_crash": True}},
        "q006": {"hang": True},
    }
    return write_questions_jsonl(tmp_path / "questions.jsonl", make_questions(10, special=special))


def test_failures_are_recorded_and_the_run_goes_on(tmp_path: Path, dataset: Path) -> None:
    run = tmp_path / "run"
    out = run_eval(_config(dataset, timeout_s=0.5), run, progress=False)
    assert (out.total, out.ran, out.skipped) == (20, 20, 0)
    rows = {(r.agent, r.question_id): r for r in load_results(run)}
    assert len(rows) == 20
    assert rows[("toy-seeker", "q002")].error == "RuntimeError: agent bug on q002"
    assert rows[("toy-seeker", "q004")].error == "RuntimeError: simulated simulator crash"
    assert rows[("toy-passive", "q004")].error is None  # the passive agent never steps
    assert rows[("toy-seeker", "q006")].error == "timed out after 0.5s"
    failed = [k for k, r in rows.items() if r.error]
    assert len(failed) == out.failed == 5
    assert all(rows[k].correct is False and rows[k].score == 0.0 for k in failed)
    # Every other seeker episode found the colour, answered right and showed it (support 1).
    ok = [r for (a, _), r in rows.items() if a == "toy-seeker" and not r.error]
    assert len(ok) == 7 and all(r.correct and r.support == 1.0 and r.steps >= 1 for r in ok)
    # A failed episode still has a trajectory saying why, with the traceback.
    traj = Trajectory.load(episode_dir(run, "toy-seeker", "q002"))
    assert traj.events[0].kind == "episode_failed" and "agent bug" in traj.events[0].data["traceback"]
    assert json.loads((run / "run.json").read_text())["questions_sha256"]
    assert out.summary.agent("toy-seeker").failed == 3


def test_rerun_skips_finished_episodes_and_retry_failed_reruns_only_failures(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    log = tmp_path / "episodes.log"
    monkeypatch.setenv("TOY_EPISODE_LOG", str(log))
    cfg = _config(dataset, timeout_s=0.5, agents=["toy-seeker"])
    run_eval(cfg, run, progress=False)
    assert len(log.read_text().splitlines()) == 10
    again = run_eval(cfg.model_copy(update={"concurrency": 2}), run, progress=False)
    assert (again.ran, again.skipped) == (0, 10)
    assert len(log.read_text().splitlines()) == 10  # nothing ran twice
    retried = run_eval(cfg, run, progress=False, retry_failed=True)
    assert retried.ran == 3
    started = [line.split()[2] for line in log.read_text().splitlines()[10:]]
    assert sorted(started) == ["q002", "q004", "q006"]
    assert len(load_results(run)) == 10


def test_offline_rescoring_gives_the_live_numbers(tmp_path: Path, dataset: Path) -> None:
    run = tmp_path / "run"
    live = run_eval(_config(dataset, timeout_s=0.5), run, progress=False)
    offline = rescore_run(run)
    assert offline.changed == [] and offline.missing == []
    assert offline.summary == live.summary
    assert offline.results == load_results(run)
    seeker = offline.summary.agent("toy-seeker")
    assert seeker.overall.n == 10 and seeker.overall.correct == 7
    assert set(seeker.families) == {"colour", "shade"}
    assert sum(g.n for g in seeker.subcategories.values()) == 10
    assert seeker.cost.calls == pytest.approx(0.7) and seeker.cost.images_in_answer == pytest.approx(0.7)
    # A changed verdict (as after a scorer change) is found and reported, not hidden.
    path = episode_dir(run, "toy-passive", "q000") / "trajectory.json"
    traj = Trajectory.load(path.parent)
    assert traj.result is not None
    traj.result.raw_answer = "(B)"  # option letter B = green, the ground truth of q000
    path.write_text(traj.model_dump_json())
    changed = rescore_run(run)
    assert changed.changed == ["toy-passive/q000"]
    passive = changed.summary.agent("toy-passive").overall
    assert passive.correct == live.summary.agent("toy-passive").overall.correct + 1


def test_resume_with_other_settings_is_refused(tmp_path: Path, dataset: Path) -> None:
    run = tmp_path / "run"
    run_eval(_config(dataset, timeout_s=0.5, limit=3), run, progress=False)
    with pytest.raises(ConfigError, match=r"limit: the run directory has 3, this command asks for 4"):
        run_eval(_config(dataset, limit=4), run, progress=False)
    # The same dataset name with different contents is refused too.
    write_questions_jsonl(dataset, make_questions(3, families=("other",)))
    with pytest.raises(ConfigError, match="questions: the dataset's questions differ"):
        run_eval(_config(dataset, limit=3), run, progress=False)


async def test_environments_in_worker_processes(tmp_path: Path) -> None:
    special = {"q002": {"scene": {"env_crash": True}}, "q004": {"scene": {"env_exit": True}}}
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(8, special=special))
    run = tmp_path / "run"
    cfg = _config(data, env_workers=2, timeout_s=30.0, agents=["toy-seeker"], concurrency=2)
    out = await evaluate(cfg, run, progress=False)
    rows = {r.question_id: r for r in load_results(run)}
    assert out.ran == 8 and len(rows) == 8
    assert "simulated simulator crash" in str(rows["q002"].error)
    # A worker that dies fails its episode with the reason; a fresh worker takes the next ones.
    assert "exited with code 3 during toy/Reveal-v0.step" in str(rows["q004"].error)
    others = [r for q, r in rows.items() if q not in ("q002", "q004")]
    assert all(r.error is None and r.correct and r.support == 1.0 for r in others), others


async def test_a_plugin_that_fails_in_the_workers_stops_the_run(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad_plugin.py"
    bad.write_text(
        "import os\nif os.getpid() != int(os.environ['PARENT_PID']):\n    raise ImportError('no sim')\n"
    )
    monkeypatch.setenv("PARENT_PID", str(os.getpid()))
    cfg = _config(dataset, env_workers=1, plugins=[PLUGIN, str(bad)], limit=2)
    expected = r"could not import the plugins: plugin \S+bad_plugin\.py failed"
    with pytest.raises(PluginError, match=expected) as err:
        await evaluate(cfg, tmp_path / "run", progress=False)
    # One line for the CLI, naming the import's own error, and no worker traceback in it.
    assert "ImportError: no sim" in str(err.value) and "\n" not in str(err.value)


async def test_unknown_environment_stops_the_run_before_any_episode(tmp_path: Path, dataset: Path) -> None:
    qs = make_questions(2)
    qs[1].env_id = "toy/Missing-v0"
    with pytest.raises(ConfigError, match="'toy/Missing-v0', which is not registered"):
        await evaluate(_config(dataset), tmp_path / "run", questions=qs, progress=False)


async def test_a_run_of_failures_stops_early(tmp_path: Path) -> None:
    special = {f"q{i:03d}": {"agent_crash": True} for i in range(12)}
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(12, special=special))
    with pytest.raises(EviseekError, match=r"5 episodes in a row failed.*--retry-failed"):
        await evaluate(_config(data, concurrency=1), tmp_path / "run", progress=False, max_failure_streak=5)
    with ResultsStore(tmp_path / "run") as store:
        assert 5 <= len(store) < 12  # rows committed together with the fifth may follow it


def test_episode_seed_is_per_question_and_stable() -> None:
    assert episode_seed(0, "q1") == episode_seed(0, "q1") != episode_seed(1, "q1")
    assert episode_seed(0, "q1") != episode_seed(0, "q2")


def test_summary_weights_questions_not_families() -> None:
    from eviseek.types import EpisodeResult

    rows = [
        EpisodeResult(question_id=f"a{i}", agent="x", family="A", correct=True, score=1.0) for i in range(3)
    ]
    rows.append(EpisodeResult(question_id="b", agent="x", family="B", correct=False, score=0.0))
    s = summarize(rows).agent("x")
    assert s.overall.accuracy == pytest.approx(0.75)
    assert s.families["A"].accuracy == 1.0 and s.families["B"].accuracy == 0.0


async def test_real_agent_on_the_tabletop_in_a_worker_process(tmp_path: Path) -> None:
    """Passive on the PyBullet tabletop, the simulator in a worker process, graded exactly."""
    from eviseek.eval.datasets import load_dataset
    from eviseek.models.scripted import ScriptedModel

    questions = load_dataset("tabletop:dev")[:2]
    truth = {q.id: q.ground_truth for q in questions}

    def answer(messages, config):  # type: ignore[no-untyped-def]
        gt = truth[config.metadata["question_id"]]
        return json.dumps({"answer": gt if isinstance(gt, str) else gt[0], "reasoning": "scripted"})

    cfg = RunConfig(
        agents=["passive"], model="scripted/truth", dataset="tabletop:dev", limit=2, env_workers=1
    )
    run = tmp_path / "run"
    out = await evaluate(cfg, run, model=ScriptedModel(answer, name="scripted/truth"), progress=False)
    rows = load_results(run)
    assert out.ran == 2 and all(r.error is None and r.correct for r in rows), rows
    assert all(r.support in (0.0, 0.5, 1.0) and r.images_in_answer >= 1 for r in rows)
    traj = Trajectory.load(episode_dir(run, "passive", rows[0].question_id))
    assert traj.answer_images[0].array(episode_dir(run, "passive", rows[0].question_id)).ndim == 3
    assert rescore_run(run).summary == out.summary


def _openai_config(dataset: Path, url: str) -> RunConfig:
    return _config(
        dataset, agents=["toy-seeker"], model="openai/test-model", base_url=url, api_key_env="EVAL_TEST_KEY"
    )


async def test_a_refused_request_stops_the_run_until_the_model_has_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eviseek.errors import ModelConfigError
    from eviseek.testing.openai_server import OpenAITestServer, ServerReply

    monkeypatch.setenv("EVAL_TEST_KEY", "sk-eval-secret")
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(4))
    # A wrong key: every request is refused, so the run stops at once with the server's reason.
    refuse = OpenAITestServer(lambda req: ServerReply.error(401, "invalid api key"))
    with refuse as srv, pytest.raises(ModelConfigError) as err:
        await evaluate(_openai_config(data, srv.base_url), tmp_path / "bad", progress=False)
    assert "sk-eval-secret" not in str(err.value)
    with ResultsStore(tmp_path / "bad") as store:
        assert len(store) == 0

    # Once the model has answered, a refusal is about one episode (a prompt too long, say).
    def reply(req: dict) -> ServerReply:
        text = json.dumps(req["messages"])
        if "question q002" in text:
            return ServerReply.error(400, "maximum context length exceeded")
        return ServerReply(text="green")

    with OpenAITestServer(reply) as srv:
        cfg = _openai_config(data, srv.base_url).model_copy(update={"concurrency": 1})
        out = await evaluate(cfg, tmp_path / "ok", progress=False)
    rows = {r.question_id: r for r in load_results(tmp_path / "ok")}
    assert out.ran == 4 and out.failed == 1
    assert "maximum context length" in str(rows["q002"].error)
    assert rows["q000"].correct and rows["q000"].input_tokens  # green is q000's colour


async def test_closing_the_local_executor_closes_the_model_client() -> None:
    from eviseek.eval.envpool import ThreadEnvProvider
    from eviseek.eval.runner import LocalExecutor
    from eviseek.models import get_model
    from eviseek.models.openai_compat import OpenAICompatModel
    from eviseek.testing import OpenAITestServer, ServerReply
    from eviseek.types import ChatMessage

    with OpenAITestServer([ServerReply(text="yes")]) as server:
        model = get_model("openai/test-vlm", base_url=server.base_url, api_key="sk-test-not-a-real-key")
        assert isinstance(model, OpenAICompatModel)
        await model.generate([ChatMessage.user("ready?")])
        client = model._client()
        executor = LocalExecutor({}, model, ThreadEnvProvider(), timeout_s=5.0)
        await executor.start()
        await executor.close()
    assert client.is_closed()
    assert not model._clients


class _CancelSwallowingExecutor:
    """Episodes that fail after a short wait, the first of which swallows a cancellation, as
    ``asyncio.wait_for`` can before Python 3.12 when its episode ends at the moment of cancel."""

    def __init__(self) -> None:
        self.swallowed = 0

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def run(self, agent: str, question: object, seed: int) -> Trajectory:
        import asyncio

        from eviseek.types import EpisodeResult

        try:
            await asyncio.sleep(0.3)
        except asyncio.CancelledError:
            if self.swallowed:
                raise
            self.swallowed += 1
        qid = question.id  # type: ignore[attr-defined]
        traj = Trajectory(episode_id=f"e-{qid}", question_id=qid, agent=agent, model="toy/oracle")
        traj.result = EpisodeResult(question_id=qid, agent=agent, model="toy/oracle", error="boom")
        return traj


async def test_a_stopped_run_ends_even_when_a_worker_swallows_its_cancellation(tmp_path: Path) -> None:
    """The breaker stops the run while a worker is inside an episode that ignores the cancel; the
    run must still end with the breaker's error instead of waiting forever for a commit slot."""
    import asyncio

    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(8))
    executor = _CancelSwallowingExecutor()
    run = evaluate(
        _config(data, agents=["toy-seeker"], concurrency=1),
        tmp_path / "run",
        executor=executor,
        progress=False,
        max_failure_streak=2,
    )
    with pytest.raises(EviseekError, match=r"2 episodes in a row failed"):
        await asyncio.wait_for(run, 30)
    assert executor.swallowed == 1


async def _sleep_then(delay: float, error: BaseException | None = None) -> None:
    await asyncio.sleep(delay)
    if error is not None:
        raise error


async def test_slot_watch_returns_when_every_worker_ends_and_ignores_the_committer() -> None:
    workers = {asyncio.create_task(_sleep_then(0.01 * i)) for i in range(50)}
    committer = asyncio.create_task(asyncio.sleep(30))
    await asyncio.wait_for(_first_failure_or_all_done(workers, committer), 5)
    assert all(t.done() for t in workers) and not committer.done()
    committer.cancel()


@pytest.mark.parametrize("failing", ["worker", "committer"])
async def test_slot_watch_raises_the_first_failure_at_once(failing: str) -> None:
    boom = OSError("disk full")
    workers = {asyncio.create_task(_sleep_then(30)) for _ in range(5)}
    if failing == "worker":
        workers.add(asyncio.create_task(_sleep_then(0.01, boom)))
    committer = asyncio.create_task(_sleep_then(0.02, boom) if failing == "committer" else _sleep_then(30))
    with pytest.raises(OSError, match="disk full"):
        await asyncio.wait_for(_first_failure_or_all_done(workers, committer), 5)
    for t in (*workers, committer):
        t.cancel()


async def test_slot_watch_with_no_workers_returns_at_once() -> None:
    committer = asyncio.create_task(asyncio.sleep(30))
    await asyncio.wait_for(_first_failure_or_all_done(set(), committer), 1)
    committer.cancel()
