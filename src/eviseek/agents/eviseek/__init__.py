"""EviSeek: evidence demands, an acquisition plan, intent-level seeking and an evidence board."""

from eviseek.agents.eviseek.agent import EviSeekAgent, EviSeekNavAgent
from eviseek.agents.eviseek.board import EvidenceBoard
from eviseek.agents.eviseek.config import EviSeekConfig, EviSeekNavConfig, Memory
from eviseek.agents.eviseek.intents import CompiledIntent, IntentLibrary, IntentSpec
from eviseek.agents.eviseek.pose import PoseTracker
from eviseek.agents.eviseek.replay import replay_answer

__all__ = [
    "CompiledIntent",
    "EviSeekAgent",
    "EviSeekConfig",
    "EviSeekNavAgent",
    "EviSeekNavConfig",
    "EvidenceBoard",
    "IntentLibrary",
    "IntentSpec",
    "Memory",
    "PoseTracker",
    "replay_answer",
]
