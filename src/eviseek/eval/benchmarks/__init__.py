"""The built-in benchmarks, one module each; each registers itself with
:func:`eviseek.eval.benchmark.register_benchmark` when imported."""
