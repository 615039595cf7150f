"""Reading a question: what is asked, about which objects, and in what answer form.

The reference policy reads the question the way a person skimming it would: the colour words
and nouns name the objects (``the red cube``), a few key phrases say what is asked (``in a
straight line``, ``touching``, ``how many``), and the answer contract (kind and options, which
travel in the request metadata as well as in the prompt) says how to reply. Nothing here sees the
scene.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from eviseek.models.reference.vision import COLOR_NAMES

TaskKind = Literal[
    "shape",
    "alignment",
    "triangle",
    "contact",
    "size",
    "distance",
    "count",
    "fit",
    "which_fit",
    "base",
    "base_top",
    "overflow",
    "capacity",
    "slide",
    "stack",
    "moved",
    "connect",
    "order",
    "covered",
    "in_jar",
    "in_mirror",
    "reflected",
    "mirror_closer",
    "path_count",
    "unknown",
]

HEIGHTS_SHOW = "where heights show"
"""The phrase the policy's demands, plan goals and view notes use for a side view of boxes; a later
stage that reads it (with no advice text of its own) knows the count is of cubes among taller
look-alikes."""

TEST_KINDS: tuple[str, ...] = (
    "fit",
    "which_fit",
    "base",
    "base_top",
    "overflow",
    "capacity",
    "slide",
    "stack",
)
"""Kinds settled by a physical test whose outcome the environment reports in words."""

NOUNS: dict[str, str] = {
    "cube": "cube",
    "cubes": "cube",
    "block": "block",
    "blocks": "block",
    "cylinder": "cylinder",
    "cylinders": "cylinder",
    "ball": "ball",
    "balls": "ball",
    "sphere": "ball",
    "spheres": "ball",
    "cone": "cone",
    "cones": "cone",
    "pyramid": "pyramid",
    "pyramids": "pyramid",
    "board": "board",
    "bin": "bin",
    "bins": "bin",
    "box": "box",
    "boxes": "box",
    "crate": "crate",
    "crates": "crate",
    "bowl": "bowl",
    "bowls": "bowl",
    "cup": "cup",
    "cups": "cup",
    "ramp": "ramp",
    "ramps": "ramp",
    "container": "container",
    "mat": "mat",
    "mats": "mat",
    "wall": "wall",
    "walls": "wall",
    "platform": "platform",
    "object": "object",
    "objects": "object",
}
"""Nouns a question may use for things on the table, mapped to one singular form."""

_MENTION = re.compile(
    r"\b("
    + "|".join((*COLOR_NAMES, "white", "gray", "grey", "black"))
    + r")[\s_]+("
    + "|".join(NOUNS)
    + r")\b",
    re.IGNORECASE,
)


class ObjectRef(BaseModel):
    """An object named in a question: a colour word and a noun."""

    color: str
    noun: str

    @property
    def name(self) -> str:
        """The underscore form objects are named by, e.g. ``red_cube``."""
        return f"{self.color}_{self.noun}"

    @property
    def shape(self) -> str | None:
        """The primitive shape the noun implies (a block is a box), or None for ``object``."""
        if self.noun in ("cube", "block"):
            return "cube"
        if self.noun in ("cylinder", "ball", "cone", "pyramid"):
            return self.noun
        return None


class Task(BaseModel):
    """What the question asks, as far as the reference policy needs to know."""

    kind: TaskKind
    text: str
    objects: list[ObjectRef] = Field(default_factory=list)
    """Objects in the order the question names them (occluders excluded)."""
    occluder: ObjectRef | None = None
    reference: ObjectRef | None = None
    """The object distances are measured from (distance questions)."""
    answer_kind: str = "option"
    options: list[str] = Field(default_factory=list)
    prefer_smaller: bool = False
    """For size and distance questions: the question asks for the smaller / nearer one
    (``closer``) rather than the larger / farther one."""
    guidance: str = ""
    """The task's advice text, when the request carries it (metadata or the prompt's advice line)."""
    notes: str = ""
    """What the policy's own earlier stages wrote that this request repeats (demands, the subtask
    goal, working memory): the keeper and the answerer get no advice text, only these."""

    @property
    def light_changed(self) -> bool:
        """The question says the light has changed since the reference image (Illumination
        Variability): colours are read after dividing out the light."""
        low = self.text.lower()
        return "light" in low and "changed" in low

    @property
    def tall_lookalikes(self) -> bool:
        """For counts of cubes: the advice warns of taller blocks that look the same from above,
        so only a view from the side tells them apart (Category Ambiguity)."""
        low = self.guidance.lower()
        named_cubes = bool(self.objects) and self.objects[0].noun == "cube"
        warned = ("tall" in low and "side" in low) or HEIGHTS_SHOW in self.notes.lower()
        return self.kind == "count" and named_cubes and warned

    @property
    def colors(self) -> list[str]:
        """Colours of the named objects, in order, without repeats."""
        out: list[str] = []
        for o in self.objects:
            if o.color in COLOR_NAMES and o.color not in out:
                out.append(o.color)
        return out

    @property
    def order_asked(self) -> str:
        """For move-order questions: ``first``, ``last`` or ``order`` (the whole sequence)."""
        low = self.text.lower()
        if "moved first" in low or "first" in low.split("?")[0].split()[-2:]:
            return "first"
        if "moved last" in low:
            return "last"
        return "order"

    @property
    def asks_to_stay(self) -> bool:
        """For slope questions: whether "yes" means the object stays put (not that it slides)."""
        low = self.text.lower()
        return "stay" in low or "still" in low or "without sliding" in low

    @property
    def layout(self) -> bool:
        """Whether the answer depends on where objects stand relative to each other."""
        return self.kind in ("alignment", "triangle", "distance", "contact", "size")


def mentions(text: str) -> list[ObjectRef]:
    """Every ``<colour> <noun>`` in ``text``, in order."""
    out = []
    for m in _MENTION.finditer(text):
        color = m.group(1).lower().replace("grey", "gray")
        out.append(ObjectRef(color=color, noun=NOUNS[m.group(2).lower()]))
    return out


def option_ref(option: str) -> ObjectRef | None:
    """An option written as an object name (``red_cube``) as a reference, if it is one."""
    found = mentions(option.replace("_", " "))
    return found[0] if len(found) == 1 else None


# Long because it is one ordered table of question phrasings, one branch per kind of question;
# the order matters (a more specific phrasing is tested before a general one, such as "in the
# mirror" before "closer"), which one chain of branches shows and separate helpers would hide.
def read_task(question: str, metadata: dict[str, Any], guidance: str = "") -> Task:
    """Work out what ``question`` asks, using the answer contract in ``metadata`` when present.

    ``guidance`` is the task's advice when the prompt states it outside the metadata."""
    text = question.strip()
    low = text.lower()
    options = [str(o) for o in metadata.get("options") or []]
    answer_kind = str(metadata.get("answer_kind") or ("option" if options else "text"))
    refs = mentions(text)
    things = [r for r in refs if r.noun not in ("board", "mat", "wall", "platform")]
    boards = [r for r in refs if r.noun == "board"]
    kind: TaskKind = "unknown"
    prefer_smaller = False
    reference: ObjectRef | None = None
    if "robot" in low and "pass" in low:
        # "How many X did the robot pass?": a count along a path seen in the reference images.
        kind = "path_count"
    elif "reflected in the mirror" in low and "which of the" in low:
        kind = "reflected"
    elif "in the mirror" in low and ("closer" in low or "farther" in low):
        kind = "mirror_closer"
        prefer_smaller = "closer" in low
    elif answer_kind == "integer" or low.startswith("how many") or " how many " in low:
        kind = "count"
        # "How many red cubes ..." names its kind in the plural; mentions() already maps it.
    elif "through the mirror" in low:
        kind = "in_mirror"
    elif "glass" in low and "inside" in low:
        kind = "in_jar"
    elif "cloth" in low and "under" in low:
        kind = "covered"
    elif "what shape" in low or "which shape" in low:
        kind = "shape"
    elif "best fit" in low and options:
        # "Which container does X best fit inside?": the smallest of the offered bins it fits in.
        kind = "which_fit"
    elif "as its base" in low and "on top of b?" in low:
        # ESI-Bench's three-object form: which crate carries B, and which block goes on top of B;
        # the text says on which side of B each stands.
        kind = "base_top"
    elif "as its base" in low or "on top of as" in low:
        # "Which box should B be placed on top of as its base?": answered left or right.
        kind = "base"
    elif "fit inside" in low or "fit into" in low or "fits inside" in low:
        kind = "fit"
    elif "holds more" in low or "hold more" in low or "larger volume" in low:
        kind = "capacity"
    elif "overflow" in low or "spill" in low:
        kind = "overflow"
    elif ("slope" in low or "ramp" in low) and any(w in low for w in ("slid", "stay", "still")):
        kind = "slide"
    elif "stack" in low and ("order" in low or "tower" in low):
        kind = "stack"
    elif "moved one at a time" in low or ("were moved" in low and "order" in low):
        kind = "order"
    elif "moved" in low and ("reference" in low or "which one" in low):
        kind = "moved"
    elif "get from" in low or "doorway" in low:
        kind = "connect"
    elif "straight line" in low or "in a line" in low or "collinear" in low or "aligned" in low:
        kind = "alignment"
    elif "triangle" in low:
        kind = "triangle"
    elif "touching" in low or "in contact" in low or "touch each other" in low:
        kind = "contact"
    elif any(w in low for w in ("closer", "nearer", "farther", "further")):
        kind = "distance"
        prefer_smaller = "closer" in low or "nearer" in low
        m = re.search(r"(?:closer|nearer|farther|further)\s+(?:to|from)\s+the\s+([a-z]+)\s+([a-z]+)", low)
        if m:
            found = mentions(f"{m.group(1)} {m.group(2)}")
            reference = found[0] if found else None
    elif any(w in low for w in ("larger", "bigger", "smaller", "largest", "smallest")):
        kind = "size"
        prefer_smaller = "smaller" in low or "smallest" in low
    objects = things
    if kind == "which_fit":
        # The object named first, then the offered containers (exact names).
        bins = [option_ref(o) for o in options]
        objects = things[:1] + [b for b in bins if b is not None]
    if kind in ("size", "distance", "moved", "stack", "order", "capacity") and options:
        # The candidates are the options; the question text names them too, but options are exact.
        cands = [option_ref(o) for o in options]
        if all(c is not None for c in cands):
            objects = [c for c in cands if c is not None]
    return Task(
        kind=kind,
        text=text,
        objects=objects,
        occluder=boards[0] if boards else None,
        reference=reference,
        answer_kind=answer_kind,
        options=options,
        prefer_smaller=prefer_smaller,
        guidance=str(metadata.get("guidance") or guidance or ""),
    )
