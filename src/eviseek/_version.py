"""The package version, kept apart so it can be read without importing anything else."""

__version__ = "0.1.0"
