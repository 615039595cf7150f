"""Visual support on hand-checked frames."""

from __future__ import annotations

from eviseek.envs.tabletop import SceneSpec, TabletopEnv
from eviseek.envs.tabletop.families._common import make_object
from eviseek.envs.tabletop.support import ActionEvent, FrameInfo, OutcomeEvidence, SupportGrader
from eviseek.types import Action, Pose

from .conftest import hand_question, occlusion_scene


def test_hidden_object_grades_zero_and_a_revealing_view_one(env: TabletopEnv) -> None:
    q = hand_question(
        occlusion_scene(), "partial_occlusion", {"target": "red_cube", "occluder": "gray_board"}
    )
    _obs, _ = env.reset(options={"question": q})
    # Straight behind a 0.2 m board: not one pixel of the cube shows.
    assert env.oracle.visibility(0, "red_cube")[0] == 0
    assert env.visual_support([0]) == 0.0
    # Up, forward to just before the board, and tilted down: the view looks over it onto the cube.
    for a in ["move_up"] * 3 + ["move_forward"] * 2 + ["turn_down"] * 4:
        res = env.step(Action(name=a))
    fid = res.observation.frame_id
    assert env.oracle.visible_fraction(fid, "red_cube") > 0.9
    assert env.visual_support([fid]) == 1.0
    assert env.visual_support([0, fid]) == 1.0
    assert env.visual_support([0, 1, 2, 3]) == 0.0  # frames before moving over it show nothing


def test_a_partly_covered_object_is_measured_against_its_unoccluded_area(env: TabletopEnv) -> None:
    scene = occlusion_scene()
    # Slide the cube sideways so about half of it sticks out past the board's edge.
    cube = scene.object("red_cube")
    moved = cube.model_copy(update={"position": (0.1, 0.1 + 0.015, cube.position[2])})
    scene = scene.model_copy(update={"objects": [scene.objects[0], moved, scene.objects[2]]})
    env.reset(options={"question": hand_question(scene, "partial_occlusion", {"target": "red_cube"})})
    frac = env.oracle.visible_fraction(0, "red_cube")
    assert 0.2 < frac < 0.8
    assert env.visual_support([0]) == 0.0  # the rule needs 60 per cent


def test_layout_pieces_give_half_from_the_side_and_one_from_above(env: TabletopEnv) -> None:
    objs = [
        make_object("cube", "red", (-0.2, 0.0), 0.06),
        make_object("cone", "blue", (0.0, 0.1), 0.06),
        make_object("cylinder", "green", (0.2, 0.0), 0.06),
    ]
    scene = SceneSpec(objects=objs, camera=Pose(x=0.0, y=-0.8, z=0.15, yaw=90.0, pitch=-15.0))
    meta = {"objects": [o.name for o in objs]}
    env.reset(options={"question": hand_question(scene, "linear_alignment", meta)})
    assert env.visual_support([0]) == 0.5  # all three visible, but not from above
    for a in [
        "move_up",
        "move_up",
        "move_forward",
        "move_forward",
        "move_forward",
        "turn_down",
        "turn_down",
        "turn_down",
    ]:
        res = env.step(Action(name=a))
    assert res.observation.pose is not None and res.observation.pose.pitch == -60.0
    report = env.oracle.support_report([res.observation.frame_id])
    assert all(r["shown"] for r in report), report
    assert env.visual_support([res.observation.frame_id]) == 1.0


def test_outcome_evidence_needs_a_frame_after_the_action() -> None:
    from eviseek.envs.tabletop.sim import ProbeSim, TabletopSim

    scene = SceneSpec(
        objects=[
            make_object("cube", "red", (0.0, 0.0), 0.06),
            make_object("cube", "blue", (0.2, 0.0), 0.06),
        ],
        camera=Pose(x=-0.6, y=0.1, z=0.3, yaw=-10.0, pitch=-15.0),
    )
    sim = TabletopSim(scene)
    probe = ProbeSim(width=320, height=240)
    probe.load(scene)
    ev = OutcomeEvidence(action="put_on", args={"object": "red_cube"}, show=["red_cube", "blue_cube"])
    grader = SupportGrader([ev], alone=probe.pixels_alone, fov=scene.fov, width=320, height=240)
    for fid in (0, 1):
        frame = sim.render(scene.camera)
        grader.add_frame(FrameInfo(fid, scene.camera, frame.segmentation, sim.poses(), dict(sim.uid)))
    grader.add_event(
        ActionEvent(
            name="put_on", args={"object": "red_cube", "target": "blue_cube"}, success=True, frame_after=1
        )
    )
    assert grader.grade([0]) == 0.0  # taken before the test
    assert grader.grade([1]) == 1.0
    sim.close()
    probe.close()
