"""What the simulated camera environments (tabletop, house) share around their own physics.

Both keep the same settings (image size, renderer, step budget, privileged access), start an
episode the same way (fresh counters, one first frame), render every step into an
:class:`~eviseek.types.Observation` while the support grader records the frame, end an episode
on ``stop``, release two PyBullet clients (the scene and the probe that renders objects alone)
and hide ground truth behind an oracle that an env built with ``privileged=False`` refuses.
Each env keeps its own scene, actions and extra state; the step loop is
:class:`~eviseek.envs.budget.BudgetedSteps`.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from eviseek.envs.budget import BudgetedSteps
from eviseek.envs.support import Evidence, FrameInfo, SupportGrader
from eviseek.errors import EnvError
from eviseek.types import Feedback, Image, Observation, Pose, Question


class PrivilegedAccessError(EnvError):
    """Raised when privileged simulator data is requested from an env built with ``privileged=False``."""


class _Rendered(Protocol):
    """A rendered frame: what :meth:`SimulatedEnv._frame_observation` reads of it."""

    rgb: Any
    depth: Any
    segmentation: Any


class SupportOracle:
    """Privileged views every simulated env offers: ground truth, visual support, masks.

    For scoring and tests only. Agents get none of this.
    """

    _env: SimulatedEnv[Any]

    def _grader(self) -> SupportGrader:
        if self._env._grader is None:
            raise EnvError("no episode yet; call reset() first")
        return self._env._grader

    @property
    def ground_truth(self) -> str | list[str] | None:
        """The question's recorded ground truth."""
        q = self._env._question
        return q.ground_truth if q else None

    def visual_support(self, frame_ids: list[int]) -> float:
        """Grade in {0, 0.5, 1}: are the decisive evidence pieces shown by these frames?"""
        return self._grader().grade([f for f in frame_ids if f >= 0])

    def support_report(self, frame_ids: list[int]) -> list[dict[str, object]]:
        """Per evidence piece: label and whether the frames show it."""
        return self._grader().report([f for f in frame_ids if f >= 0])

    def segmentation(self, frame_id: int) -> Any:
        """The body-id mask of a frame."""
        return self._grader().frames[frame_id].segmentation


OracleT = TypeVar("OracleT", bound=SupportOracle)


class SimulatedEnv(BudgetedSteps, Generic[OracleT]):
    """Base of the PyBullet camera environments; a subclass sets ``_sim`` and ``_probe`` and
    implements ``reset``, ``_execute`` and ``_observe``."""

    width: int
    height: int
    renderer: str
    privileged: bool
    _sim: Any
    _probe: Any
    """The scene's PyBullet client and the probe's (``None`` until the first reset)."""

    def _setup(self, *, width: int, height: int, renderer: str, max_steps: int, privileged: bool) -> None:
        """Check and keep the settings; no episode yet."""
        if max_steps < 1:
            raise EnvError(f"max_steps must be at least 1, got {max_steps}")
        for name, side in (("width", width), ("height", height)):
            # Checked here, when the environment is built, not at its first render: a server
            # started with a bad size must refuse to start, not fail every episode.
            if isinstance(side, bool) or not isinstance(side, int) or not 16 <= side <= 8192:
                raise EnvError(f"{name} must be a whole number of pixels from 16 to 8192, got {side!r}")
        self.width = width
        self.height = height
        self.renderer = renderer
        self.max_steps = max_steps
        self.privileged = privileged
        self._question: Question | None = None
        self._grader: SupportGrader | None = None
        self._pose = Pose()
        self._frame_id = -1
        self._steps = 0
        self._terminated = False
        self._truncated = False
        self._last_obs: Observation | None = None
        self._oracle: OracleT | None = None

    def _begin_episode(self, start: Pose) -> tuple[Observation, dict[str, Any]]:
        """Put the camera at ``start`` with fresh counters and return the first frame and info."""
        self._pose = start.model_copy()
        self._frame_id = -1
        self._steps = 0
        self._terminated = False
        self._truncated = False
        obs = self._observe()
        return obs, self._info()

    def _start_grader(self, evidence: list[Evidence], fov: float) -> None:
        """Grade this episode's frames for ``evidence`` (privileged envs only). The probe must
        already hold the episode's scene: the grader asks it to render objects alone."""
        self._grader = SupportGrader(
            evidence, alone=self._probe.pixels_alone, fov=fov, width=self.width, height=self.height
        )

    def close(self) -> None:
        """Release both PyBullet clients."""
        for client in (self._sim, self._probe):
            if client is not None:
                client.close()
        self._sim = None
        self._probe = None

    # -- privileged --------------------------------------------------------------------

    @property
    def oracle(self) -> OracleT:
        """Privileged accessors (ground truth, masks, support). Never for agents."""
        if self._oracle is None:
            if not self.privileged:
                raise PrivilegedAccessError(
                    "this environment was built with privileged=False; privileged data is unavailable"
                )
            raise EnvError("no episode yet; call reset() first")
        return self._oracle

    @oracle.setter
    def oracle(self, value: OracleT) -> None:
        self._oracle = value

    def visual_support(self, frame_ids: list[int]) -> float:
        """Support grade in {0, 0.5, 1} of frames of this episode (delegates to :attr:`oracle`)."""
        return self.oracle.visual_support(frame_ids)

    # -- public read-only state ---------------------------------------------------------

    @property
    def question(self) -> Question | None:
        """The question of the current episode."""
        return self._question

    @property
    def steps_taken(self) -> int:
        """Steps charged so far in this episode."""
        return self._steps

    @property
    def pose(self) -> Pose:
        """The current (true) camera pose."""
        return self._pose.model_copy()

    # -- internals -------------------------------------------------------------------

    def _info(self) -> dict[str, Any]:
        q = self._question
        return {
            "question_id": q.id if q else None,
            "subcategory": q.subcategory if q else None,
            "steps": self._steps,
            "steps_left": self.max_steps - self._steps,
            "frame_id": self._frame_id,
        }

    def _stop(self) -> Feedback:
        """End the episode at the agent's request."""
        self._terminated = True
        return Feedback(operation="stop", success=True, reason="episode ended by the agent")

    def _frame_objects(self) -> tuple[dict[str, tuple[tuple[float, ...], tuple[float, ...]]], dict[str, int]]:
        """Every body's pose and segmentation id now, for the support grader."""
        raise NotImplementedError

    def _frame_observation(self, frame: _Rendered, metadata: dict[str, Any]) -> Observation:
        """The next frame as an observation; the support grader (if any) records it first.

        Depth and segmentation reach the observation only when ``privileged``. The caller adds
        its own metadata after ``steps_left`` and sets ``_last_obs`` once the observation is done.
        """
        self._frame_id += 1
        if self._grader is not None:
            object_poses, object_uids = self._frame_objects()
            self._grader.add_frame(
                FrameInfo(
                    frame_id=self._frame_id,
                    pose=self._pose.model_copy(),
                    segmentation=frame.segmentation,
                    object_poses=object_poses,
                    object_uids=object_uids,
                )
            )
        return Observation(
            image=Image.from_array(frame.rgb),
            pose=self._pose.model_copy(),
            frame_id=self._frame_id,
            depth=frame.depth if self.privileged else None,
            segmentation=frame.segmentation if self.privileged else None,
            metadata={"steps_left": self.max_steps - self._steps, **metadata},
        )
