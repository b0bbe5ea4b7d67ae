"""Data-using learning curves: every (arm, fraction, seed) trains in epochs until validation stops
improving, and its best-validation checkpoint is scored on the whole test split. `plan` says what runs,
`early_stopped_run` runs one, `rates` chooses learning rates on validation, `sweep` orders and resumes the
runs, `floors` are the cheap baselines, `verdict` turns the points into gaps, slopes and closing sizes."""
