"""ESI-Bench (github.com/ESI-Bench/ESI-Bench, MIT) from eviseek: its question records as a
dataset (``esibench:PATH``), their counts, and the import of its official answer files."""

from eviseek.eval.esibench.dataset import (
    ENV_ID,
    PAPER_COUNTS,
    LoadOptions,
    SubcategoryCount,
    count_subcategories,
    load_esibench,
    load_with_exclusions,
    parse_spec,
)
from eviseek.eval.esibench.records import ESIRecord, iter_records, payload_of

__all__ = [
    "ENV_ID",
    "PAPER_COUNTS",
    "ESIRecord",
    "LoadOptions",
    "SubcategoryCount",
    "count_subcategories",
    "iter_records",
    "load_esibench",
    "load_with_exclusions",
    "parse_spec",
    "payload_of",
]
