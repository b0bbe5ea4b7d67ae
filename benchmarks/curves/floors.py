"""The cheap floor of each modality, a baseline a reader recognises: logistic regression on pixels
(image), TF-IDF + logistic regression (text), logistic regression on the mean and spread of the log-mel
frames (audio) and on 2-mer composition (protein). scikit-learn's, on the same splits and fraction as the
networks (the arm's own data module builds them); the regularisation C is chosen on validation only.

A learning curve that cannot beat its floor is visibly broken.
"""

from __future__ import annotations

import itertools
import time
import warnings
from typing import Any

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey, run_args
from benchmarks.curves.plan import Arm, Protocol
from tabrasa.training.lightning_cli import build_cli

C_GRID = (0.01, 0.1, 1.0, 10.0)
MAX_ITER = 1000
RESIDUES = "ACDEFGHIKLMNPQRSTVWY"
PAIRS = {"".join(p): i for i, p in enumerate(itertools.product(RESIDUES, repeat=2))}


def image_features(raw: Any) -> np.ndarray:
    pixels = np.asarray(raw, dtype=np.float32)
    return pixels.reshape(-1) / 255.0


def kmer_features(sequence: str) -> np.ndarray:
    counts = np.zeros(len(PAIRS) + len(RESIDUES), dtype=np.float32)
    sequence = sequence.upper()
    for a, b in itertools.pairwise(sequence):
        index = PAIRS.get(a + b)
        if index is not None:
            counts[index] += 1
    for residue in sequence:
        if residue in RESIDUES:
            counts[len(PAIRS) + RESIDUES.index(residue)] += 1
    return counts / max(len(sequence), 1)


def audio_features(tokenizer: Any, raw: Any) -> np.ndarray:
    """Mean and standard deviation over time of the run's own log-mel frames."""
    encoded = tokenizer.encode(raw)
    frames = next(v for v in encoded.values() if isinstance(v, torch.Tensor) and v.dtype.is_floating_point)
    frames = frames.reshape(-1, frames.shape[-1]).float()
    return torch.cat([frames.mean(0), frames.std(0)]).numpy()


def split_inputs(data: Any, split: str) -> tuple[list[Any], np.ndarray]:
    rows = data.splits[split]
    raws = [data.raw_input(rows[i], split) for i in range(len(rows))]
    return raws, np.asarray(rows["label"])


def featurise(modality: str, data: Any, raws: list[Any], vectorizer: TfidfVectorizer | None) -> Any:
    if modality == "image":
        return np.stack([image_features(r) for r in raws])
    if modality == "protein":
        return np.stack([kmer_features(str(r)) for r in raws])
    if modality == "audio":
        tokenizer = data.tokenizer.eval() if hasattr(data.tokenizer, "eval") else data.tokenizer
        return np.stack([audio_features(tokenizer, r) for r in raws])
    if vectorizer is None:
        raise ValueError("text features need the TF-IDF vectorizer fitted on the train split")
    return vectorizer.transform([str(r) for r in raws])


def fit_floor(root: Any, arm: Arm, key: RunKey, protocol: Protocol) -> dict[str, Any]:
    """The floor at one fraction: C chosen on validation, scored once on the whole test split."""
    started = time.perf_counter()
    cli = build_cli(run_args(root, arm, key, protocol, ""), run=False, save_config=False)
    data = cli.datamodule
    data.setup("fit")
    train_raw, y_train = split_inputs(data, "train")
    val_raw, y_val = split_inputs(data, "validation")
    test_raw, y_test = split_inputs(data, "test")
    vectorizer = None
    if key.modality == "text":
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, max_features=100_000)
        vectorizer.fit([str(r) for r in train_raw])
    x_train, x_val, x_test = (
        featurise(key.modality, data, r, vectorizer) for r in (train_raw, val_raw, test_raw)
    )
    fitted = []
    for c in C_GRID:
        scaler = [] if key.modality == "text" else [StandardScaler()]
        model = make_pipeline(*scaler, LogisticRegression(C=c, max_iter=MAX_ITER))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model.fit(x_train, y_train)
        converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
        fitted.append((float(model.score(x_val, y_val)), -c, c, model, converged))
    val_acc, _, c, model, converged = max(fitted, key=lambda f: (f[0], f[1]))
    return {
        **{name: getattr(key, name) for name in KEY_FIELDS},
        "n_train": len(y_train),
        "n_val": len(y_val),
        "n_test": len(y_test),
        "steps": 0,
        "epochs": 0,
        "stopped": "early" if converged else "budget",  # the solver converged before max_iter, or not
        "best_epoch": None,
        "evaluations": len(C_GRID),
        "converged": converged,
        "val_acc": val_acc,
        "test_acc": float(model.score(x_test, y_test)),
        "params": int(sum(np.size(getattr(model[-1], a)) for a in ("coef_", "intercept_"))),
        "regularisation_c": c,
        "fit_seconds": round(time.perf_counter() - started, 2),
        "seconds": round(time.perf_counter() - started, 2),
    }
