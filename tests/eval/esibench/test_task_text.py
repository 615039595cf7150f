"""Task text from ESI-Bench's own task modules, rendered offline from a checkout (never copied):
with ``ESI_BENCH_ROOT``, every public record gets its task's text, and each of the 19 modules
offers its own actions."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from eviseek.envs.esibench.task_text import guidance_of, task_actions, with_object_slots
from eviseek.eval.esibench.dataset import LoadOptions, load_with_exclusions
from eviseek.types.taxonomy import TASK_MODULES
from tests.eval.esibench.official import esibench_root

# The task modules whose prompts offer manipulation actions, and what they offer (ESI-Bench 9f35528).
OWN_ACTIONS = {
    "action": {"pick_up", "place_on_top_of", "put_back"},
    "counting": {"pick_up", "place_on_top_of", "put_back"},
    "size": {"pick_up_obj_near_*"},  # one per reference object: pick_up_obj_near_conch...
    "pour": {"fill_water_in", "pour_into"},
    "slope": {"put_on_slope"},
    "stacking": {"pick_up", "place_on_top_of", "place_on_the_floor"},
    "storage": {"pick_up", "put_inside"},
    "transparent": {"pickup", "pour"},
}


CAMERA = {
    "move_forward", "move_backward", "move_left", "move_right", "move_up", "move_down",
    "turn_left", "turn_right", "turn_up", "turn_down", "stop",
}  # fmt: skip


def listed_actions(prompt: str) -> set[str]:
    """Every action a task prompt lists, camera primitives left out: the items of each line that
    introduces actions ("...actions:") and of the lines under it, and the items of a JSON reply
    template's action field. The test's own reading, independent of eviseek's parser."""
    items: list[str] = []
    block = False
    for raw in prompt.splitlines():
        line = re.sub(r"^\s*(?:[-*]|\d+[.)])\s*", "", raw).strip()
        field = re.search(r'"action"\s*:\s*"<(.*)>"', line)
        if field and "|" in field.group(1):
            items += field.group(1).split("|")
        head = re.match(r"^(.*\bactions)\s*:\s*(.*)$", line, re.IGNORECASE)
        if head:
            block = not head.group(2)
            items += re.split(r"\s*[|,]\s*", head.group(2)) if head.group(2) else []
        elif block and line and (raw[:1].isspace() or raw.lstrip()[:1] in "-*" or "|" in line):
            named = re.match(r"^([a-z_]+):\s", line)
            items += [named.group(1)] if named else line.split("|")
        else:
            block = False
    out = {i.strip().rstrip(".").strip() for i in items}
    return {i for i in out if i and i not in CAMERA and not re.fullmatch(r"<[^<>]*>", i)}


def offers(actions: list[dict], item: str) -> bool:
    """Whether one of the offered actions is ``item`` (its name, or its phrase with the slots
    filled in)."""
    for a in actions:
        pattern = "".join(
            ".+" if part.startswith("<") else re.escape(part) for part in re.split(r"(<[^<>]+>)", a["phrase"])
        )
        if item == a["name"] or re.fullmatch(pattern, item, re.IGNORECASE):
            return True
    return False


def test_action_lists_in_each_layout() -> None:
    text = (
        "Goal: test it.\nYou can take the following actions:\n  - put_on_slope: let it go\n"
        "  - move_forward | stop\n\nAvailable actions: pick up <object> | place <object> on top of <object>\n"
        "ACTIONS:\n  put back <object>\n  turn_left | stop\n\nRULES:\n  - be careful: really\n"
        'Output ONLY valid JSON: {"action": "<a>"}'
    )
    acts = {a.name: a for a in task_actions(text)}
    assert set(acts) == {"put_on_slope", "pick_up", "place_on_top_of", "put_back"}
    assert acts["place_on_top_of"].params == ["object", "target"]
    assert acts["place_on_top_of"].command({"object": "cup", "target": "box"}) == "place cup on top of box"
    with pytest.raises(ValueError, match="needs the argument target"):
        acts["place_on_top_of"].command({"object": "cup"})
    slotted = with_object_slots(
        task_actions("Available actions:\n  pour big jar into glass | stop"), ["big jar", "glass"]
    )
    assert [(a.name, a.phrase, a.params) for a in slotted] == [
        ("pour_into", "pour <object> into <object>", ["object", "target"])
    ]
    assert "JSON" not in guidance_of(text) and "put_on_slope: let it go" in guidance_of(text)


def test_every_record_gets_its_task_text_from_the_checkout() -> None:
    root = esibench_root()
    kept, _ = load_with_exclusions(root, LoadOptions(images="skip", tasktext="require"))
    assert len(kept) == 3438
    offered: dict[str, set[str]] = defaultdict(set)
    prompted: Counter[str] = Counter()
    for q in kept:
        text = q.metadata["esibench"]["task_text"]
        assert q.guidance and q.guidance == text["guidance"] and text["forced_choice_prompt"], q.id
        assert text["checkout"] == str(Path(root).resolve())
        assert "build_system_prompt" in text["hooks"]["system_prompt"]
        offered[text["task"]] |= {re.sub(r"_near_.*", "_near_*", a["name"]) for a in text["actions"]}
        listed = listed_actions(text["system_prompt"])
        assert all(offers(text["actions"], item) for item in listed), (q.id, listed, text["actions"])
        prompted[text["task"]] += bool(listed)
        for a in text["actions"]:  # every action the prompt offers is named in the guidance
            assert a["phrase"].split("<")[0].strip() in q.guidance or a["description"], (q.id, a)
    assert set(offered) == set(TASK_MODULES)
    assert {t: names for t, names in offered.items() if names} == OWN_ACTIONS
    assert {t for t, n in prompted.items() if n} == set(OWN_ACTIONS)  # the 8 that list own actions
    # Counting w Occlusion and every other subcategory of the paper have the text.
    assert len({(q.family, q.subcategory) for q in kept}) == 29
