"""Rigid Containment says "fits inside" only with what fitting means, since objects can stand
taller than the bins: the simulator's test asks for the object at rest between the walls with its
middle below the rim, not wholly below it."""

from __future__ import annotations

from eviseek.envs.tabletop import SceneSpec, generate_questions
from eviseek.envs.tabletop.families import get_family
from eviseek.envs.tabletop.families.rigid_containment import FITS_MEANS
from eviseek.envs.tabletop.generate import QuestionBuilder


def test_fits_inside_is_defined_wherever_an_object_stands_above_a_rim() -> None:
    qs = generate_questions(6, 5, esi_forms=True, render_images=False, subcategories=["rigid_containment"])
    builder = QuestionBuilder()
    try:
        fam = get_family("rigid_containment")
        qs += [
            builder.build(fam, 5, i, render_images=False, designs=("fits", "does-not-fit")) for i in range(2)
        ]
    finally:
        builder.close()
    taller = 0
    for q in qs:
        spec = SceneSpec.from_question(q.scene)
        obj = spec.object(q.metadata["object"])
        depth = min(o.size[2] for o in spec.objects if o.shape == "container")
        taller += obj.size[2] > depth
        assert "fit" in q.text and FITS_MEANS in q.text, q.text
    # The definition is needed: some objects stand taller than a bin is deep.
    assert taller > 0
