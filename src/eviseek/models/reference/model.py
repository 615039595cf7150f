"""The ``reference/`` provider: a non-neural policy that plays every agent stage from pixels.

It answers the same requests a vision-language model gets (chat messages with images, plus the
request metadata real providers ignore: ``GenerateConfig.stage``, ``response_schema`` and
``metadata``) and replies with JSON that fits the stage's reply schema. The stage says what is
being asked; the question, its answer contract and the agent's own state (pose estimate, legal
actions, subtask goal) come from the metadata, which repeats what the prompt text states; the
scene comes only from the attached images and the action feedback in the text.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from eviseek.models.reference import navigate, policy
from eviseek.models.reference.express_judge import express_judge_reply
from eviseek.models.reference.solve import Verdict, quality, solve, visible_fraction
from eviseek.models.reference.task import TEST_KINDS, Task, mentions, read_task
from eviseek.models.reference.vision import View, analyse
from eviseek.types import ChatMessage, Completion, GenerateConfig, Image, Stage, Usage, message_images

MODEL_ID = "reference/tabletop"

IMAGE_PATCH_PX = 28
"""Input tokens are estimated as a VLM would spend them: one token per 28 x 28 pixel patch of
each image plus about one per four characters of text."""

_HISTORY_ACTION = re.compile(
    r"^Step \d+: action=([a-z_]+)(?:\([^)]*\))?(?:\s*\(([^)]*)\))?\s*result=\[([^\]]*)\]", re.M
)

Handler = Callable[["Request"], "dict[str, Any] | str"]


class Request:
    """One call as the policy sees it: stage, question, metadata, images and text."""

    def __init__(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> None:
        self.messages = list(messages)
        self.config = config
        self.stage = config.stage or ""
        self.meta: dict[str, Any] = dict(config.metadata or {})
        self.images: list[Image] = message_images(self.messages)
        self.text = "\n".join(m.text() for m in self.messages if m.role == "user")
        question = str(self.meta.get("question") or "")
        if not question:
            found = re.findall(r"^Question:\s*(.+)$", self.text, re.M)
            question = found[-1].strip() if found else self.text[-300:]
        advice = re.findall(r"^Advice for this task:\s*(.+)$", self.text, re.M)
        self.task: Task = read_task(question, self.meta, advice[-1] if advice else "")
        self._views: list[View] | None = None

    @property
    def views(self) -> list[View]:
        """Every attached image, analysed, in order."""
        if self._views is None:
            balance = self.task.light_changed
            self._views = [analyse(img, balance=balance) for img in self.images]
        return self._views

    @property
    def references(self) -> list[bool]:
        """Which attached images are task reference images (frame id -1 in the metadata)."""
        ids = self.meta.get("frame_ids")
        if isinstance(ids, list) and len(ids) == len(self.images):
            return [int(i) == -1 for i in ids]
        return [False] * len(self.images)

    def verdict(self) -> Verdict:
        """The answer the attached images and the reported outcomes support."""
        memory = "\n".join(self.memory)
        return solve(self.task, self.views, text=self.text + "\n" + memory, references=self.references)

    @property
    def memory(self) -> list[str]:
        """The seeker's working memory for the active subtask (what was tried, what came of it)."""
        lines = self.meta.get("working_memory", self.meta.get("memory"))
        return [str(x) for x in lines] if isinstance(lines, list) else []

    @property
    def trail(self) -> list[str]:
        """Recent atomic actions with their feedback, as the seeker is shown them."""
        lines = self.meta.get("trail")
        return [str(x) for x in lines] if isinstance(lines, list) else []

    @property
    def current(self) -> View | None:
        """The last attached image (agents attach the current view last)."""
        return self.views[-1] if self.views else None


class ReferenceModel:
    """A pixel-only reference policy for the tabletop benchmark (not a neural model).

    Use it for demos and regression tests: it makes every agent stage produce well-formed,
    sensible replies without a GPU or an API key, and it clearly beats chance on the tabletop
    families when it gets informative views. It knows colour words and shapes, measures blobs
    in images and follows fixed viewing routines; it reads the question, the answer contract,
    the agent's reported pose, actions and feedback, and the images, and nothing else.
    """

    def __init__(self, *, name: str = MODEL_ID, delay_s: float = 0.0) -> None:
        self.name = name
        self.delay_s = delay_s
        self._lock = threading.Lock()
        self._handlers: dict[str, Handler] = {  # keyed by the agents' stage names
            Stage.PASSIVE: _answer,
            Stage.ANSWER: _answer,
            Stage.FORCED_CHOICE: _forced_choice,
            Stage.SINGLE_STEP: _single_step,
            Stage.DEMANDS: _demands,
            Stage.PLAN: _plan,
            Stage.SEEK: _seek,
            Stage.KEEP: _keep,
            Stage.CURATE: _curate,
            Stage.COVERAGE: _coverage,
            Stage.TRIAGE: _triage,
            Stage.BLIND: _answer,
            Stage.EXPLORE_CHECK: _explore_check,
            Stage.EXPRESS_JUDGE: _express_judge,
        }

    @classmethod
    def from_spec(cls, name: str, **kwargs: Any) -> ReferenceModel:
        """Registry factory: ``reference/<name>`` (``tabletop`` is the one policy there is)."""
        return cls(name=f"reference/{name}", **kwargs)

    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> Completion:
        """Reply to one request; the image work runs in a thread so other episodes keep moving."""
        cfg = config or GenerateConfig()
        start = time.perf_counter()
        text = await asyncio.to_thread(self._reply, list(messages), cfg)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        usage = Usage(
            input_tokens=estimate_input_tokens(messages),
            output_tokens=max(1, math.ceil(len(text) / 4)),
            reasoning_tokens=0,
            images_sent=len(message_images(list(messages))),
        )
        return Completion(
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            model=self.name,
            finish_reason="stop",
        )

    def reply(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> dict[str, Any] | str:
        """The reply for one request: an object for a stage with a reply schema, else plain text."""
        req = Request(messages, config)
        handler = self._handlers.get(req.stage, _from_schema)
        return handler(req)

    def _reply(self, messages: list[ChatMessage], config: GenerateConfig) -> str:
        with self._lock:  # the analysis cache is shared; one call at a time keeps it simple
            out = self.reply(messages, config)
        return out if isinstance(out, str) else json.dumps(out)


def estimate_input_tokens(messages: Sequence[ChatMessage]) -> int:
    """Approximate prompt tokens: text characters / 4 plus one per 28 x 28 patch of each image."""
    chars = sum(len(m.text()) for m in messages)
    patches = sum(
        math.ceil(img.width / IMAGE_PATCH_PX) * math.ceil(img.height / IMAGE_PATCH_PX)
        for img in message_images(list(messages))
    )
    return math.ceil(chars / 4) + patches


# --------------------------------------------------------------------------------------------
# answering stages


def _answer(req: Request) -> dict[str, Any]:
    verdict = req.verdict()
    return {"answer": verdict.answer, "reasoning": _why(verdict, len(req.views))}


def _forced_choice(req: Request) -> dict[str, Any]:
    return {"answer": req.verdict().answer}


def _why(verdict: Verdict, n_views: int) -> str:
    if verdict.view is None:
        return f"{verdict.reason} (guessing)"
    return f"image {verdict.view + 1} of {n_views}: {verdict.reason}"


def _triage(req: Request) -> dict[str, Any]:
    verdict = req.verdict()
    sufficient = verdict.confidence >= 0.9
    return {
        "sufficient": sufficient,
        "answer": verdict.answer if sufficient else "",
        "reasoning": _why(verdict, len(req.views)),
    }


# --------------------------------------------------------------------------------------------
# Single-model


def _replay(text: str) -> policy.Replay:
    rep = policy.Replay()
    for m in _HISTORY_ACTION.finditer(text):
        rep.actions.append(m.group(1))
        rep.clamped.append("clamped" in m.group(3))
    return rep


def _single_step(req: Request) -> dict[str, Any]:
    specs = [a for a in req.meta.get("legal_actions", []) if isinstance(a, dict)]
    legal = [str(a.get("name")) for a in specs if a.get("kind") != "control"]
    step = int(req.meta.get("step", 0) or 0)
    view = req.current
    verdict = req.verdict()
    if view is None:
        return {"action": "stop", "answer": verdict.answer, "confidence": 0.0, "reasoning": "no image"}
    replay = _replay(req.text)
    first_steep = view.steep if step == 0 else None
    if navigate.is_navigation(legal):
        results = [m.group(3) for m in _HISTORY_ACTION.finditer(req.text)]
        action, why = navigate.nav_atomic(
            req.task, view, replay.actions, bool(results) and navigate.failed(results[-1]), legal
        )
    else:
        action, why = policy.next_atomic(
            policy.routine_for(req.task), req.task, view, replay, legal, first_steep, specs, req.text
        )
    if action is None:
        conf = max(verdict.confidence, 0.85)
        return {"action": "stop", "answer": verdict.answer, "confidence": round(conf, 3), "reasoning": why}
    return {
        "action": action,
        "answer": verdict.answer,
        "confidence": round(min(verdict.confidence, 0.6), 3),
        "reasoning": why,
    }


# --------------------------------------------------------------------------------------------
# EviSeek planning


def _names(task: Task) -> str:
    refs = list(task.objects)
    if task.reference is not None:
        refs.insert(0, task.reference)
    words = [f"the {r.name.replace('_', ' ')}" for r in refs]
    if len(words) <= 1:
        return words[0] if words else "the objects the question names"
    return ", ".join(words[:-1]) + " and " + words[-1]


def demand_texts(task: Task) -> list[str]:
    """What must be observed to answer ``task``, without presuming the answer."""
    who = _names(task)
    if task.kind == "alignment":
        return [f"Where {who} stand on the table, seen from above so that depth cannot hide an offset"]
    if task.kind == "triangle":
        return [f"The three distances between {who}, judged in a view looking straight down"]
    if task.kind == "distance":
        return [f"The positions of {who} in one view from above, where distances are not foreshortened"]
    if task.kind == "size":
        return [f"{who.capitalize()} seen together from straight above, at the same distance from the camera"]
    if task.kind == "contact":
        return [f"The place where {who} meet or part, seen from above across the line joining them"]
    if task.kind == "count":
        what = task.objects[0].name.replace("_", " ") + "s" if task.objects else "objects"
        return [f"Every {what[:-1]} on the table, including any standing behind the boards, seen once"]
    if task.kind == "fit":
        return [f"Whether {who} ends up inside when the one is dropped into the other"]
    if task.kind == "overflow":
        return [f"Whether water spills when the contents of {who.split(' and ')[0]} are poured over"]
    if task.kind == "slide":
        return [f"What {who} does when set down on the slope: stays or slides"]
    if task.kind == "stack":
        return [f"Which placements of {who} on one another stay standing"]
    if task.kind == "connect":
        return [f"Which rooms {who} stand in and where the doorways between rooms are, seen from above"]
    if task.kind == "in_mirror":
        return [f"How large {who} shows in the first view: near and seen directly, or far in the mirror"]
    if task.kind == "in_jar":
        return [f"Whether {who} stands within the jar's walls, seen from above where glass cannot mislead"]
    if task.kind == "covered":
        return [
            "The outline of the cloth over the hidden object: a flat top, a dome or a peak, seen from above"
        ]
    if task.kind == "order":
        return ["The pile the moved objects form, seen from the side so that every layer shows"]
    if task.kind == "moved":
        return [f"Where {who} stand now, seen from above, to compare with the reference image"]
    if task.kind == "shape":
        who = _names(task)
        if task.occluder is not None:
            return [f"The whole outline and shading of {who}, seen past the edge of the board"]
        return [f"{who.capitalize()} seen from a clearly different elevation than the first view"]
    return ["A clear view of what the question asks about"]


def goal_texts(task: Task) -> list[str]:
    """The acquisition plan: goals that start with the label of the routine that serves them."""
    who = _names(task)
    routine = policy.routine_for(task)
    label = policy.ROUTINE_LABELS[routine]
    if routine == "overhead":
        if task.kind == "count":
            return [f"{label}: the whole tabletop from straight above, every candidate whole in the picture"]
        return [f"{label}: {who} from straight above, all whole and near the middle of the picture"]
    if routine == "around":
        return [f"{label}: {who} whole, seen from beside the board"]
    if routine == "tilted":
        return [f"{label}: {who} from well above or below the first line of sight"]
    if routine == "test":
        return [f"{label}: try it with {who} and read the reported outcome"]
    if routine == "still":
        return [f"{label}: how large {who} shows in the first view"]
    if routine == "jar":
        return [f"{label}: the jar's footprint and {who} from straight above"]
    if routine == "drape":
        return [f"{label}: the whole cloth from straight above, its flat top or peak clear"]
    if routine == "side":
        return [f"{label}: each box of the named colour from the side, where heights show"]
    return [f"{label}: scan the scene once"]


def _demands(req: Request) -> dict[str, Any]:
    limit = int(req.meta.get("max_demands", 4) or 4)
    return {"demands": [{"text": t} for t in demand_texts(req.task)[:limit]]}


def _plan(req: Request) -> dict[str, Any]:
    limit = int(req.meta.get("max_subtasks", 5) or 5)
    demand_ids = [int(d["id"]) for d in req.meta.get("demands", []) if "id" in d]
    goals = goal_texts(req.task)[:limit]
    subtasks: list[dict[str, Any]] = []
    for i, goal in enumerate(goals):
        item: dict[str, Any] = {"goal": goal}
        if demand_ids:
            item["demand"] = demand_ids[i % len(demand_ids)]
        subtasks.append(item)
    return {"subtasks": subtasks}


# --------------------------------------------------------------------------------------------
# EviSeek seeking, keeping and control


def _seek(req: Request) -> dict[str, Any]:
    view = req.current
    subtask = req.meta.get("subtask") or {}
    specs = [i for i in req.meta.get("intents", []) if isinstance(i, dict)]
    offered = [str(i.get("name")) for i in specs]
    memory = req.memory
    remaining = int(req.meta.get("remaining_steps", 0) or 0)
    if view is None:
        return policy.Intent("BLOCKED", reasoning="no current view was shown").reply()
    if navigate.is_navigation(offered):
        name, args, why = navigate.nav_intent(req.task, view, memory, req.trail, remaining)
        nav_reply = policy.Intent(name, dict(args), reasoning=why).reply()
        if req.meta.get("ask_keep"):
            nav_reply.update(_seek_keep(req, view))
        return nav_reply
    pose = policy.PoseEstimate.from_metadata(req.meta.get("pose"))
    pose.pitch_floor = any("pitch>=-90" in m for m in memory + req.trail)
    routine = policy.routine_of_goal(str(subtask.get("goal", "")), req.task)
    reply = policy.seek_intent(routine, req.task, view, pose, offered, memory, remaining, specs).reply()
    if req.meta.get("ask_keep"):
        reply.update(_seek_keep(req, view))
    return reply


def _keep(req: Request) -> dict[str, Any]:
    if req.meta.get("purpose") == "track":
        return _track(req)
    views = req.views
    # The first image is the view before the intent; the rest are the new candidates.
    candidates = views[1:] if len(views) > 1 else views
    return _judge_views(req, candidates, _tested(req))


def _tested(req: Request) -> bool:
    """Whether the reported outcomes include a physical test (not only camera moves)."""
    outcomes = req.meta.get("outcomes") or []
    return any(str(o.get("operation", "")) not in _CAMERA for o in outcomes if isinstance(o, dict))


def _curate(req: Request) -> dict[str, Any]:
    """Split retention's curator: the keeper's judgement over the intermediate frames shown."""
    verdict = _judge_views(req, req.views, _tested(req))
    return {"frames": verdict["frames"] if verdict["keep"] else [], "note": verdict["note"]}


def _seek_keep(req: Request, view: View) -> dict[str, Any]:
    """Split retention's keep field of a seek reply: the keeper's judgement of the current view.

    Whether that view shows a test's outcome is read from the last line of the action trail.
    """
    trail = [str(t) for t in req.trail]
    last = trail[-1].split(":", 1)[-1].strip() if trail else ""
    action = last.split("(", 1)[0].split(" ", 1)[0]
    verdict = _judge_views(req, [view], bool(action) and action not in _CAMERA)
    return {"keep": verdict["keep"], "keep_note": verdict["note"] if verdict["keep"] else ""}


def _judge_views(req: Request, candidates: list[View], tested: bool) -> dict[str, Any]:
    if req.meta.get("navigation") and req.task.kind == "unknown":
        return _keep_named_colour(req, candidates)
    scores = [quality(req.task, v) for v in candidates]
    if not scores:
        return {"keep": False, "frames": [], "note": "nothing new to keep"}
    best = max(range(len(scores)), key=lambda i: (scores[i], i))
    if tested:
        return {"keep": True, "frames": [len(candidates)], "note": "the outcome of the test, seen after it"}
    if req.task.kind in TEST_KINDS:
        # After a test, a look from above shows where things ended up (e.g. inside a bin).
        seen = [i for i, v in enumerate(candidates) if v.steep and visible_fraction(req.task, v) >= 1.0]
        if seen:
            return {"keep": True, "frames": [seen[-1] + 1], "note": "where the objects ended up, from above"}
        return {"keep": False, "frames": [], "note": "the objects are not all in view"}
    # A look at a lone object is worth keeping whenever it shows the object whole; layouts need
    # everything named in one steep view.
    threshold = {"shape": 0.01, "order": 0.6}.get(req.task.kind, 0.8)
    if scores[best] < threshold:
        return {"keep": False, "frames": [], "note": "these views do not show what the question needs"}
    frames = [best + 1]
    if req.task.kind in ("count", "order", "moved"):
        # Views of a spread-out or piled scene complement each other: keep every good one.
        frames = [i + 1 for i, q in enumerate(scores) if q >= threshold]
    verdict = solve(req.task, [candidates[best]], text=req.text)
    note = f"{_view_words(req.task, candidates[best])}; {verdict.reason}"
    return {"keep": True, "frames": frames, "note": note}


_CAMERA = {
    "move_forward",
    "move_backward",
    "move_left",
    "move_right",
    "move_up",
    "move_down",
    "turn_left",
    "turn_right",
    "turn_up",
    "turn_down",
}


def _view_words(task: Task, view: View) -> str:
    where = "from above" if view.steep else "from near table height"
    if task.kind == "count":
        return f"the table {where}"
    return f"{_names(task)} {where}"


def _track(req: Request) -> dict[str, Any]:
    view = req.current
    if view is None:
        return {"visible": False, "note": "no image"}
    colors = [r.color for r in mentions(str(req.meta.get("target", "")))] or req.task.colors
    if not colors:
        return {"visible": True, "note": "no colour to look for; assuming it is still there"}
    seen = [c for c in colors if view.of(c)]
    return {"visible": bool(seen), "note": ("still see " + ", ".join(seen)) if seen else "lost from view"}


def _coverage(req: Request) -> dict[str, Any]:
    if req.meta.get("control") == "navigation":
        return _coverage_nav(req)
    closed = req.meta.get("closed") or {}
    remaining = req.meta.get("remaining") or []
    covered = [int(closed["demand"])] if closed.get("status") == "done" and closed.get("demand") else []
    decision = "continue" if remaining else "stop"
    return {"covered": covered, "decision": decision, "subtasks": [], "note": "following the plan"}


def _keep_named_colour(req: Request, candidates: list[View]) -> dict[str, Any]:
    """In a house the policy cannot measure the question; it keeps the clearest view of a colour
    the question names (e.g. "the orange laptop"), if one is in view."""
    sizes = [navigate.target_size(req.task, v) for v in candidates]
    if not sizes or max(sizes) < NAMED_COLOUR_SHARE:
        return {"keep": False, "frames": [], "note": "no colour the question names is in view"}
    best = max(range(len(sizes)), key=lambda i: (sizes[i], i))
    colours = ", ".join(req.task.colors)
    note = f"{colours} in view ({sizes[best]:.1%} of the picture)"
    return {"keep": True, "frames": [best + 1], "note": note}


NAMED_COLOUR_SHARE = 0.002
"""Smallest share of the picture a named colour must cover for the house keeper to keep the view
(about 150 pixels at 320x240: a small object a few metres away)."""


def _coverage_nav(req: Request) -> dict[str, Any]:
    """The navigation controller's check: the active demand is covered when a newly retained
    view is good enough for the question (the keeper's own bar); stop once the retained views
    settle the question or the plan has run out."""
    covered = [int(c) for c in req.meta.get("covered_before") or []]
    active = req.meta.get("active") or {}
    threshold = {"shape": 0.01, "order": 0.6}.get(req.task.kind, 0.8)
    if req.task.kind == "unknown":
        # A question the policy cannot measure: a retained view of the colour it names is as
        # much as it can establish.
        fresh = [v for v in req.views if navigate.target_size(req.task, v) >= NAMED_COLOUR_SHARE]
    else:
        fresh = [v for v in req.views if quality(req.task, v) >= threshold]
    if fresh and active.get("demand") is not None and int(active["demand"]) not in covered:
        covered.append(int(active["demand"]))
    settled = bool(req.views) and req.verdict().confidence >= 0.9
    all_covered = {int(d["id"]) for d in req.meta.get("demands") or []} <= set(covered)
    if settled or not active or all_covered:
        return {
            "covered": covered,
            "decision": "stop",
            "subtasks": [],
            "note": "enough seen" if settled else "plan done",
        }
    return {"covered": covered, "decision": "continue", "subtasks": [], "note": "keep following the plan"}


# --------------------------------------------------------------------------------------------
# the frontier baseline


def _explore_check(req: Request) -> dict[str, Any]:
    """Enough when the attached views settle the question; else point at a named colour in view."""
    verdict = req.verdict()
    final = bool(req.meta.get("final"))
    enough = final or verdict.confidence >= 0.9
    view = req.current
    side = navigate.target_side(req.task, view) if view is not None else None
    return {
        "enough": enough,
        "answer": verdict.answer,
        "direction": side or "",
        "reasoning": _why(verdict, len(req.views)),
    }


def _express_judge(req: Request) -> dict[str, Any]:
    """EXPRESS-Bench's answer judge, played by a text rule (see :mod:`.express_judge`)."""
    return express_judge_reply(req.meta, len(req.images))


# --------------------------------------------------------------------------------------------
# any other stage


def _describe(req: Request) -> str:
    """Plain text for a request without a reply schema: the colour of the most central region
    when the question asks about a colour, else the colours in view by size."""
    view = req.current
    if view is None:
        return "I was shown no image."
    blobs = [b for found in view.blobs.values() for b in found]
    if not blobs:
        return "I see no coloured object."
    if "colour" in req.text.lower() or "color" in req.text.lower():
        cx, cy = view.width / 2, view.height / 2
        centre = min(blobs, key=lambda b: (b.centroid[0] - cx) ** 2 + (b.centroid[1] - cy) ** 2)
        return centre.color
    sizes: dict[str, int] = {}
    for b in blobs:
        sizes[b.color] = sizes.get(b.color, 0) + b.area
    return "I see " + ", ".join(sorted(sizes, key=lambda c: -sizes[c])) + "."


def _from_schema(req: Request) -> dict[str, Any] | str:
    """A minimal object that fits the reply schema of a stage this policy does not play."""
    if not req.config.response_schema:
        return _describe(req)
    schema = req.config.response_schema or {}
    out: dict[str, Any] = {}
    props = schema.get("properties", {})
    for name in schema.get("required", []):
        spec = props.get(name, {})
        kind = spec.get("type")
        if kind == "boolean":
            out[name] = False
        elif kind in ("integer", "number"):
            out[name] = 0
        elif kind == "array":
            out[name] = []
        elif kind == "object":
            out[name] = {}
        else:
            out[name] = req.verdict().answer if name == "answer" else ""
    return out
