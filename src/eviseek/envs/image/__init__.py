"""A high-resolution image as an environment whose viewpoint action is a zoom-in."""

from eviseek.envs.image.zoom import ZoomError, ZoomResult, ZoomSettings, fit_within, zoom

__all__ = ["ZoomError", "ZoomResult", "ZoomSettings", "fit_within", "zoom"]
