"""Evaluations of the loop on public benchmarks (``minloop eval ...``). Imported on demand only."""
