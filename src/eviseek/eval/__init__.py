"""Evaluation: running agents over question sets, storing results, scoring, statistics, reports.

Submodules are imported directly (``from eviseek.eval.stats import paired_bootstrap_ci``) so that
importing this package stays light.
"""
