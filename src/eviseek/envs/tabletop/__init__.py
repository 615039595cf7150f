"""The tabletop benchmark: procedurally generated PyBullet scenes for active embodied QA.

``eviseek.envs.make("eviseek/Tabletop-v0")`` builds a :class:`TabletopEnv`; questions come from
:func:`load_split` (``dev``/``test``), :func:`generate_questions` or :func:`read_questions`.
PyBullet is imported only when a simulator is built.
"""

from eviseek.envs.tabletop.env import ENV_ID, PrivilegedAccessError, TabletopEnv, TabletopOracle
from eviseek.envs.tabletop.families import TaskDraft, TaskFamily, World, all_families, get_family, slugs
from eviseek.envs.tabletop.generate import SPLITS, generate_questions, load_split, sample_question
from eviseek.envs.tabletop.scene import ObjectSpec, SceneChange, SceneSpec
from eviseek.types.question_file import read_questions, write_questions

__all__ = [
    "ENV_ID",
    "SPLITS",
    "ObjectSpec",
    "PrivilegedAccessError",
    "SceneChange",
    "SceneSpec",
    "TabletopEnv",
    "TabletopOracle",
    "TaskDraft",
    "TaskFamily",
    "World",
    "all_families",
    "generate_questions",
    "get_family",
    "load_split",
    "read_questions",
    "sample_question",
    "slugs",
    "write_questions",
]
