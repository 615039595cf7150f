"""HTML pages for looking at episodes: frames, subtasks, the evidence board, the answer.

Pages are self-contained (inline CSS, images embedded or copied next to the page) so a report
folder can be moved, zipped or opened straight from disk.
"""

from eviseek.viewer.images import ImageMode, ImageRef, ImageSourcer
from eviseek.viewer.render import (
    episode_page_path,
    find_question,
    load_questions,
    load_trajectory,
    run_viewer_index,
    write_episode_page,
    write_run_viewer,
)
from eviseek.viewer.view import EpisodeView, build_episode_view

__all__ = [
    "EpisodeView",
    "ImageMode",
    "ImageRef",
    "ImageSourcer",
    "build_episode_view",
    "episode_page_path",
    "find_question",
    "load_questions",
    "load_trajectory",
    "run_viewer_index",
    "write_episode_page",
    "write_run_viewer",
]
