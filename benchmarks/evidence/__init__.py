"""Evidence: the experiments that test the claim (learning curves, the articles' claims, transfer).

Real datasets train through `cli_run.fit_and_score` (the data module, task and Trainer of `tabrasa fit`);
`rate_sweep` chooses each arm's learning rate on validation. The articles' numeric claims:
`benchmarks/bench_claims.py` → `runner.run_claims`, one module per claim under `claims/`, each training
`probe.ProbeModel` on a task of `synthetic_tasks` with the loop of `synthetic_training`; the verdict rule and
the table in `report.py`.
"""
