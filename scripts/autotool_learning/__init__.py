"""Experiment code of one study, AutoTool's CPU-scale learning run (``scripts/autotool_learning_run.py``).

It lives next to its script, not in the library: its goals are one issue's, and nothing in
``eviseek`` imports it. :mod:`.run` runs the warm-up and the GRPO variants through the library's
training code path; :mod:`.report` turns the saved results into the Markdown report.
"""
