"""Evidence: the experiments that test the claim (learning curves, the articles claims, transfer).

The articles' numeric claims: `scripts/bench_claims.py` → `runner.run_claims`, one module per claim under
`claims/`, the synthetic tasks in `tasks.py`, the verdict rule and the table in `report.py`.
"""
