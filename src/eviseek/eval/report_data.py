"""The numbers of a report (``summary.json``), below both the report's computation
(:mod:`eviseek.eval.report`) and its rendering (:mod:`eviseek.eval.report_render`), so neither
imports the other's module for them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from eviseek.eval.autotool_report import AutoToolSection
from eviseek.eval.express import ExpressRow
from eviseek.eval.metrics import AccuracyRow, ResourceUsage, SupportRow
from eviseek.eval.stats import PairedTest

__all__ = ["ReportData", "RunInfo", "SystemInfo"]


class RunInfo(BaseModel):
    """What the report says about one run directory."""

    label: str
    path: str
    model: str
    agents: list[str]
    dataset: str = ""
    n_questions: int
    rules: str = ""
    """The scoring rule set(s) in force, from the questions (``esibench:paper``,
    ``esibench:official``; ``contract`` for questions scored by their answer contract)."""
    support_sources: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Per agent: results whose support came from the environment, the judge, or nowhere."""


class SystemInfo(BaseModel):
    """One column of the report: an agent in a run."""

    label: str
    agent: str
    model: str
    run: str


class ReportData(BaseModel):
    """Every number the report shows (saved as ``summary.json``)."""

    runs: list[RunInfo]
    systems: list[SystemInfo]
    accuracy: list[AccuracyRow]
    support: list[SupportRow]
    resources: dict[str, ResourceUsage]
    scores: dict[str, float | None]
    comparisons: list[PairedTest]
    settings: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    express: list[ExpressRow] = Field(default_factory=list)
    """EXPRESS-Bench's C, C*, E_path and d_T per system (runs with navigation questions only)."""
    autotool: list[AutoToolSection] = Field(default_factory=list)
    """Mode frequency, cost per mode and benchmark metrics per AutoTool system (if any)."""
    sections: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """The tables of report sections plugins registered, by section name (written to
    ``summary.json`` only when there are any)."""
