"""eviseek: vision-language agents that seek evidence before they answer.

The top-level package stays light: importing it pulls in no simulator, no torch and no
training library. Heavy pieces load inside the modules that use them.
"""

from eviseek._version import __version__

__all__ = ["__version__"]
