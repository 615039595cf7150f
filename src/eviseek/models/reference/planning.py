"""EviSeek's planning stages: what must be observed (demands) and the acquisition plan (goals that
name the routine serving them)."""

from __future__ import annotations

from typing import Any

from eviseek.models.reference.house import HouseAsk
from eviseek.models.reference.policy import ROUTINE_LABELS, routine_for
from eviseek.models.reference.request import Request
from eviseek.models.reference.task import HEIGHTS_SHOW, Task


def names_of(task: Task) -> str:
    refs = list(task.objects)
    if task.reference is not None:
        refs.insert(0, task.reference)
    words = [f"the {r.name.replace('_', ' ')}" for r in refs]
    if len(words) <= 1:
        return words[0] if words else "the objects the question names"
    return ", ".join(words[:-1]) + " and " + words[-1]


def demand_texts(task: Task) -> list[str]:
    """What must be observed to answer ``task``, without presuming the answer."""
    who = names_of(task)
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
    if task.kind == "count" and task.tall_lookalikes:
        what = task.objects[0].name.replace("_", " ")
        return [f"Each {what} and each look-alike block seen from the side, {HEIGHTS_SHOW}"]
    if task.kind == "count":
        what = task.objects[0].name.replace("_", " ") + "s" if task.objects else "objects"
        return [f"Every {what[:-1]} on the table, including any standing behind the boards, seen once"]
    if task.kind == "fit":
        return [f"Whether {who} ends up inside when the one is dropped into the other"]
    if task.kind == "which_fit":
        return [
            f"Which of the bins {who} ends up inside when dropped into each, and which of those is smallest"
        ]
    if task.kind == "base_top":
        return ["Which crate carries B on top when B is placed there, and which block stays on top of B"]
    if task.kind == "base":
        return [
            "Which box carries the cube on top when it is placed there, and on which side that box stands"
        ]
    if task.kind == "overflow":
        return [f"Whether water spills when the contents of {who.split(' and ')[0]} are poured over"]
    if task.kind == "capacity":
        return [f"Whether water spills when one of {who}, filled to the brim, is poured into the other"]
    if task.kind == "slide":
        return [f"What {who} does when set down on the slope: stays or slides"]
    if task.kind == "stack":
        return [f"Which placements of {who} on one another stay standing"]
    if task.kind == "connect":
        return [f"Which rooms {who} stand in and where the doorways between rooms are, seen from above"]
    if task.kind == "in_mirror":
        return [f"Whether {who} stands behind the first view, seen directly after turning round"]
    if task.kind == "reflected":
        return [f"Where the reflection of {who} shows in the mirror, against the three in the first view"]
    if task.kind == "mirror_closer":
        return [f"{who.capitalize()} themselves, seen directly from where I stand, to judge their distances"]
    if task.kind == "path_count":
        return [f"The robot's places in the reference images and now, and where {who} stand, from one pose"]
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
        who = names_of(task)
        if task.occluder is not None:
            return [f"The whole outline and shading of {who}, seen past the edge of the board"]
        return [f"{who.capitalize()} seen from a clearly different elevation than the first view"]
    return ["A clear view of what the question asks about"]


def goal_texts(task: Task) -> list[str]:
    """The acquisition plan: goals that start with the label of the routine that serves them."""
    who = names_of(task)
    routine = routine_for(task)
    label = ROUTINE_LABELS[routine]
    if routine == "overhead":
        if task.kind == "count":
            return [f"{label}: the whole tabletop from straight above, every candidate whole in the picture"]
        return [f"{label}: {who} from straight above, all whole and near the middle of the picture"]
    if routine == "around":
        return [f"{label}: {who} whole, seen from beside the board"]
    if routine == "tilted":
        return [f"{label}: {who} from well above or below the first line of sight"]
    if routine == "test" and task.kind == "slide":
        return [f"{label}: set {who} on the slope and watch the frames of the slide"]
    if routine == "test":
        return [f"{label}: try it with {who} and see the outcome"]
    if routine == "still":
        return [f"{label}: how large {who} shows in the first view"]
    if routine == "first":
        return [f"{label}: the first view, unchanged, with {who}"]
    if routine == "turn_round":
        return [f"{label}: {who} seen directly, turning in place"]
    if routine == "jar":
        return [f"{label}: the jar's footprint and {who} from straight above"]
    if routine == "drape":
        return [f"{label}: the whole cloth from straight above, its flat top or peak clear"]
    if routine == "side":
        return [f"{label}: each box of the named colour from the side, {HEIGHTS_SHOW}"]
    return [f"{label}: scan the scene once"]


def house_demand(ask: HouseAsk) -> str:
    """What a house question needs seen, without presuming the answer."""
    if ask.kind == "attribute":
        return f"The {ask.category} in the {ask.room}, near enough to tell its {ask.aspect}"
    if ask.kind == "location":
        return f"The {ask.colour} {ask.category} in the {ask.room}, with what it stands on down to the floor"
    if ask.kind in ("existence", "counting"):
        return f"Every surface of the {ask.room} where a {ask.category} could stand, seen once"
    if ask.kind == "object":
        return f"The top of the {ask.furniture} in the {ask.room}, and what stands on it"
    if ask.kind == "state":
        return f"The TV's screen in the {ask.room}, lit or dark"
    if ask.kind == "knowledge":
        return (
            f"The {ask.colour} thing on the {ask.furniture} in the {ask.room}, near enough to tell what it is"
        )
    if ask.kind == "traversable_passage":
        return f"The doorways of the {ask.room} and the rooms that show through them"
    if ask.kind == "regional_boundary":
        return f"The wall between the {ask.room} and the {ask.other}: a doorway through it, or none"
    return f"The rooms passed on the walk from the {ask.room} to the {ask.other}"


def demands(req: Request) -> dict[str, Any]:
    limit = int(req.meta.get("max_demands", 4) or 4)
    if req.house is not None:
        return {"demands": [{"text": house_demand(req.house)}]}
    return {"demands": [{"text": t} for t in demand_texts(req.task)[:limit]]}


def plan(req: Request) -> dict[str, Any]:
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
