"""eviseek: vision-language agents that seek evidence before they answer.

The top-level package stays light: importing it pulls in no simulator, no torch and no
training library. Heavy pieces load inside the modules that use them.
"""

from eviseek._gymnasium import register_when_gymnasium_loads as _register_gymnasium_ids
from eviseek._version import __version__

# Gymnasium's convention: importing the package registers its env ids (without importing
# Gymnasium or PyBullet here; see eviseek._gymnasium).
_register_gymnasium_ids()

__all__ = ["__version__"]
