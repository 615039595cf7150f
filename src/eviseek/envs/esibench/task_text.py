"""Each ESI-Bench question's task text, from the task module's own functions in the user's checkout.

Appendix D of the paper: EviSeek receives the same task definition, exploration advice and action
list as Single-model. ESI-Bench writes all three in one place, the task module's
``build_system_prompt`` (through the pipeline's ``task_build_system_prompt``), together with the
reply format of its single-model loop. :func:`task_text` calls it (and the module's forced-choice
prompt and object names) for one record, and derives:

* ``guidance``: the system prompt without the lines that fix Single-model's JSON reply format
  (EviSeek's stages have formats of their own). This is what every agent receives as the
  question's task advice;
* ``actions``: the task's own manipulation actions, read from the action lists the prompt gives
  (``put_on_slope``; ``pick up <object>``; ``pour hingeless jar into water glass``; Dimensional
  Size's ``pick_up_obj_near_<reference>``) and from the action field of its JSON reply template
  (Counting lists its actions only there), camera primitives and ``stop`` left out. Each
  becomes a named action with arguments (the ``<...>`` slots of its phrase) for the bridge and
  the agents.

Which part of the prompt is the reply format, and which lines form the action list, is our reading
of the prompts' layout (ours); the texts themselves are ESI-Bench's, rendered at load or reset
time from the checkout, never stored in eviseek.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek.envs.esibench.checkout import runner_config

CAMERA_PRIMITIVES = frozenset(
    {
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
        "stop",
    }
)

ESI_THRESHOLD = 0.8
"""ESI-Bench's confidence threshold (its pipeline's default, and the paper's θ)."""


class TaskAction(BaseModel):
    """One of a task's own actions, as its prompt offers it."""

    name: str
    """Identifier for eviseek (``put_on_slope``, ``pick_up``, ``place_on_top_of``...)."""
    phrase: str
    """The action as the task writes it; ``<slot>`` marks an argument (``pick up <object>``)."""
    params: list[str] = Field(default_factory=list)
    """Argument names, one per slot (``object``, ``target``...)."""
    description: str = ""

    def command(self, args: dict[str, Any]) -> str:
        """The action string the task reads, with ``args`` put into the slots."""
        text = self.phrase
        for param in self.params:
            if param not in args or not str(args[param]).strip():
                raise ValueError(f"{self.name} needs the argument {param}")
            text = re.sub(r"<[^<>]+>", str(args[param]).strip(), text, count=1)
        return text


class TaskText(BaseModel):
    """A question's task text, rendered from its ESI-Bench task module."""

    task: str
    system_prompt: str
    """The task's own single-model instruction, exactly as its module renders it."""
    forced_choice_prompt: str
    """The task's own last-chance prompt (``build_force_choice_prompt``)."""
    guidance: str
    """The system prompt without Single-model's reply-format lines (every agent's task advice)."""
    answer_format: str = ""
    """The task's own answer field(s) and option lines, as its prompt writes them (what every
    agent is shown as the question's answer format; :func:`answer_format_of`)."""
    actions: list[TaskAction] = Field(default_factory=list)
    objects: list[str] = Field(default_factory=list)
    """Scene object names as the task shows them to the model."""
    hooks: dict[str, str] = Field(default_factory=dict)
    """Which ESI-Bench function supplied each part."""
    checkout: str = ""


_HEADER = re.compile(
    r"^(?:you can take the following actions|you may also use these physical actions|"
    r"available(?: [a-z]+)? actions|actions)\s*:\s*(.*)$",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^\d+[.)]\s+")
_ACTION_FIELD = re.compile(r'"action"\s*:\s*"<(.*\|.*)>"')
"""The action field of a JSON reply template that lists the actions (``"action": "<move_forward|
...|pick up <object>|put back <object>>"``, Counting's only list of its own actions)."""
_BULLET = re.compile(r"^[-*]\s*")
_NAMED = re.compile(r"^([a-z][a-z0-9_]*)\s*:\s*(.*)$")


def _items(line: str) -> list[str]:
    text = _BULLET.sub("", line.strip())
    if _NAMED.match(text):
        return [text]
    parts = re.split(r"\s*\|\s*", text)
    if len(parts) == 1 and "," in text and "<" not in text:
        parts = [p.strip() for p in text.split(",")]
    return [p.strip().rstrip(".") for p in parts if p.strip()]


def _slug(phrase: str) -> str:
    words = re.sub(r"<[^<>]+>", " ", phrase.lower())
    return "_".join(re.findall(r"[a-z0-9]+", words)) or "act"


def _action(item: str) -> TaskAction | None:
    named = _NAMED.match(item)
    if named:
        name, description = named.group(1), named.group(2).strip()
        phrase = name
    else:
        name, description, phrase = _slug(item), "", item
    if name in CAMERA_PRIMITIVES or phrase.strip() in CAMERA_PRIMITIVES:
        return None
    params: list[str] = []
    for slot in re.findall(r"<([^<>]+)>", phrase):
        base = re.sub(r"\W+", "_", slot.strip().lower()).strip("_") or "object"
        if base in params:
            base = "target" if "target" not in params else f"{base}_{len(params) + 1}"
        params.append(base)
    return TaskAction(name=name, phrase=phrase, params=params, description=description)


def task_actions(system_prompt: str) -> list[TaskAction]:
    """The task's own actions, read from the action list of its system prompt."""
    found: dict[str, TaskAction] = {}
    lines = system_prompt.splitlines()
    for i, raw in enumerate(lines):
        field = _ACTION_FIELD.search(raw)
        if field:
            for item in field.group(1).split("|"):
                action = _action(item.strip())
                if action is not None and action.name not in found:
                    # Named nowhere else in the prompt (the guidance drops the template).
                    found[action.name] = action.model_copy(
                        update={"description": "in the task's reply template"}
                    )
        match = _HEADER.match(_NUMBERED.sub("", _BULLET.sub("", raw.strip())))
        if not match:
            continue
        block = [match.group(1)] if match.group(1).strip() else []
        if not block:  # the list follows on the next lines, up to a blank line
            for line in (raw_next.strip() for raw_next in lines[i + 1 :]):
                if not line or _HEADER.match(line):
                    break
                if not ("|" in line or _BULLET.match(line) or line[:1].islower()):
                    break
                block.append(line)
        for line in block:
            for item in _items(line):
                action = _action(item)
                if action is not None and action.name not in found:
                    found[action.name] = action
    # Names two phrases share (place <a> on top of <b> / place <a> on the floor) stay distinct.
    return list(found.values())


def with_object_slots(actions: list[TaskAction], objects: list[str]) -> list[TaskAction]:
    """Phrases the prompt writes with object names in them (``pour hingeless jar into water
    glass``) as one action with slots (``pour <object> into <target>``), so the agent names the
    objects as arguments."""
    out: dict[str, TaskAction] = {}
    names = sorted((o for o in objects if o.strip()), key=len, reverse=True)
    for action in actions:
        phrase = action.phrase
        if not action.params and " " in phrase and names:
            lowered = phrase.lower()
            spans: list[tuple[int, int]] = []
            for name in names:
                at = lowered.find(name.lower())
                # A name is slotted only as words of the phrase: in an identifier such as
                # Dimensional Size's pick_up_obj_near_conch it stays part of the action's name.
                while at >= 0 and (
                    (at > 0 and lowered[at - 1] != " ")
                    or any(a < at + len(name) and at < b for a, b in spans)
                ):
                    at = lowered.find(name.lower(), at + 1)
                if at >= 0:
                    spans.append((at, at + len(name)))
            if spans:
                for a, b in sorted(spans, reverse=True):
                    phrase = phrase[:a] + "<object>" + phrase[b:]
                slotted = _action(phrase)
                if slotted is not None:
                    action = slotted.model_copy(update={"description": f"e.g. {action.phrase}"})
        out.setdefault(action.name, action)
    return list(out.values())


_REPLY_FORMAT = re.compile(
    r"(\bjson\b|^\s*[{}]|^\s*\"(action|reasoning|answer|confidence)\"\s*:|confidence threshold to stop)",
    re.IGNORECASE,
)


_ANSWER_FIELD = re.compile(
    r'"(answer|choice_letter|choice_text)"\s*:\s*(.+?)\s*(?=,\s*"[a-z_]+"\s*:|,?\s*}?\s*$)', re.IGNORECASE
)
_OPTION_LINE = re.compile(
    r"^\s*-?\s*(answer choices|options|step \d+ options|dataset options[^:]*|valid answers|"
    r"answer must be|the answer is one of|use only object names|containers)\b",
    re.IGNORECASE,
)
_LISTED = re.compile(r"^\s*(?:[A-Z][.)]|-|\d+[.)])\s+\S")


def answer_format_of(system_prompt: str) -> str:
    """The task's own answer format: the answer field(s) of its JSON reply template
    (``"answer": "<yes, no, or not sure>"``; ``"choice_letter"`` and ``"choice_text"`` where the
    task letters its options) and the lines that list its options or say what an answer must
    be (``Answer choices:`` with its lettered lines, ``Options: Yes, No``, ``answer must be
    ...``), each exactly as written, in the prompt's order. Which lines these are is our reading
    of the prompts' layout (ours); the words are the task's."""
    fields: list[str] = []
    options: list[str] = []
    lines = system_prompt.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        for key, value in _ANSWER_FIELD.findall(line):
            fields.append(f'"{key}": {value.rstrip(",")}')
        if _OPTION_LINE.match(line) and not _ANSWER_FIELD.search(line):
            options.append(line.strip())
            if line.rstrip().endswith(":"):  # the list follows, one option a line
                while i + 1 < len(lines) and _LISTED.match(lines[i + 1]):
                    i += 1
                    options.append(lines[i].strip())
        i += 1
    if not fields and not options:
        return ""
    head = (
        [
            f"{'; '.join(fields)} (the task's own answer field{'s' if len(fields) > 1 else ''}; "
            "write what it asks for as your answer)"
        ]
        if fields
        else []
    )
    return "\n".join([*head, *options])


def guidance_of(system_prompt: str) -> str:
    """The system prompt without the lines that fix Single-model's JSON reply (and its stop
    threshold): what the task says about the question, the actions and how to explore."""
    kept: list[str] = []
    depth = 0
    for line in system_prompt.splitlines():
        opens, closes = line.count("{"), line.count("}")
        inside = depth > 0
        depth = max(0, depth + opens - closes)
        if inside or _REPLY_FORMAT.search(line):
            continue
        kept.append(line.rstrip())
    text = "\n".join(kept)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def task_text(
    pipeline: Any,
    tasks: dict[str, Any],
    row: dict[str, Any],
    task: str,
    source: str | Path,
    *,
    threshold: float = ESI_THRESHOLD,
    min_steps: int = 3,
    checkout: str = "",
) -> TaskText:
    """One record's task text, from its task module (``tasks[task]``) through ``pipeline``.

    ``row`` is the record as stored (the fields of ``dataset/json_clean/.../*.json``); the payload
    the hooks read is rebuilt from it by the pipeline's own ``payload_from_hf_row``, and the task
    state by its ``task_preprocess``, as the official runner does before its first step.
    """
    module = tasks[task]
    payload = pipeline.payload_from_hf_row(row)
    camera_info: dict[str, Any] = {}
    if hasattr(module, "initial_camera"):
        try:
            camera_info = dict(module.initial_camera(payload)[2] or {})
        except Exception:
            camera_info = {}
    config = runner_config(pipeline, task, Path(source), threshold=threshold, min_steps=min_steps)
    state = pipeline.task_preprocess(module, payload, Path(source), config) or {}
    return task_text_of(
        pipeline,
        module,
        task,
        payload,
        camera_info,
        state,
        threshold=threshold,
        min_steps=min_steps,
        checkout=checkout,
    )


def task_text_of(
    pipeline: Any,
    module: Any,
    task: str,
    payload: dict[str, Any],
    camera_info: dict[str, Any],
    state: dict[str, Any],
    *,
    threshold: float = ESI_THRESHOLD,
    min_steps: int = 3,
    checkout: str = "",
) -> TaskText:
    """The task text from a question already set up (payload, camera info and task state), e.g.
    by the bridge's simulator at reset."""
    system = str(pipeline.task_build_system_prompt(module, payload, threshold, min_steps, camera_info, state))
    forced = str(pipeline.task_build_force_choice_prompt(module, payload, camera_info, state))
    try:
        objects = sorted(set(pipeline.object_display_names(module, payload, camera_info).values()))
    except Exception:
        objects = []
    where = f"tasks/{task}.py"
    return TaskText(
        task=task,
        system_prompt=system,
        forced_choice_prompt=forced,
        guidance=guidance_of(system),
        answer_format=answer_format_of(system),
        actions=with_object_slots(task_actions(system), [str(o) for o in objects]),
        objects=[str(o) for o in objects],
        hooks={
            "system_prompt": f"{where}:build_system_prompt (via pipeline.task_build_system_prompt)",
            "forced_choice_prompt": (
                f"{where}:build_force_choice_prompt (via pipeline.task_build_force_choice_prompt)"
            ),
            "guidance": f"{where}:build_system_prompt without its JSON reply-format lines (ours)",
            "actions": f"{where}:build_system_prompt's action list (read by eviseek)",
            "objects": (
                f"{where}:object_display_names"
                if hasattr(module, "object_display_names")
                else f"pipeline.object_display_names ({where}:build_env_objects)"
            ),
        },
        checkout=checkout,
    )
