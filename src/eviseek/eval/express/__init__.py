"""EXPRESS-Bench's protocol: its answer judge, its metrics (C, C*, E_path, d_T) and its questions."""

from eviseek.eval.express.judge import (
    EXPRESS_FILE,
    ExpressGrade,
    ExpressJudge,
    judge_run_express,
    load_express_grades,
    parse_express_reply,
)
from eviseek.eval.express.metrics import EpisodeNav, ExpressRow, episode_nav, express_row, express_rows
from eviseek.eval.express.prompt import (
    ExpressPromptInvalid,
    ExpressPromptMissing,
    JudgePrompt,
    load_express_prompt,
)
from eviseek.eval.express.table import express_table

__all__ = [
    "EXPRESS_FILE",
    "EpisodeNav",
    "ExpressGrade",
    "ExpressJudge",
    "ExpressPromptInvalid",
    "ExpressPromptMissing",
    "ExpressRow",
    "JudgePrompt",
    "episode_nav",
    "express_row",
    "express_rows",
    "express_table",
    "judge_run_express",
    "load_express_grades",
    "load_express_prompt",
    "parse_express_reply",
]
