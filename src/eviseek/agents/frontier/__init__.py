"""The frontier-exploration baseline (in the spirit of EXPRESS-Bench's Fine-EQA) and its seen-only map."""

from eviseek.agents.frontier.agent import FrontierAgent, FrontierConfig
from eviseek.agents.frontier.occupancy import Frontier, RangeScan, SeenMap

__all__ = ["Frontier", "FrontierAgent", "FrontierConfig", "RangeScan", "SeenMap"]
