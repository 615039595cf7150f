"""The PyBullet simulator behind tabletop scenes.

:class:`TabletopSim` is the world an episode acts on; :class:`ProbeSim` renders one object alone
for the support grader; :class:`Frame` is one rendered view. PyBullet is imported lazily, when a
world is built, so importing the tabletop package stays light.
"""

from eviseek.envs.tabletop.sim.probe import ProbeSim
from eviseek.envs.tabletop.sim.rendering import Frame, Renderer
from eviseek.envs.tabletop.sim.state import PARK_Z, SIM_HZ
from eviseek.envs.tabletop.sim.world import TabletopSim

__all__ = ["PARK_Z", "SIM_HZ", "Frame", "ProbeSim", "Renderer", "TabletopSim"]
