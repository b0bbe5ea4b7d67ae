"""Evidence: each numeric claim of the articles measured at small scale against the article's figure.

`scripts/bench_claims.py` is the entry point; `runner.run_claims` does the work. One module per claim
under `claims/`, the synthetic tasks in `tasks.py`, the verdict rule in `report.py`.
"""
