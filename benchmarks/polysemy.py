"""Polysemy resolved by context: "apple" the phone maker against "apple" the fruit, in a pretrained model.

The input embedding of a token is one row of a table: the same vector in every sentence. Attention mixes
in the context, so after each layer the vectors of one word in different sentences can move apart by
sense. Measured here: the cosine similarity of the word's contextual vectors within one sense against
across senses, per layer, and where the word's attention goes in each sentence.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tabrasa.backbone.encoder import Encoder
from tabrasa.inspect.capture import attention_maps
from tabrasa.inspect.labels import id_namer
from tabrasa.tokenizers.base import Embedder, Tokenizer

PHONE = (
    "apple announced a new phone at its product event.",
    "the apple store was crowded with people buying the latest phone.",
    "apple shares rose after the company reported record sales.",
    "she charged her apple phone with a new cable.",
    "my apple laptop needs a software update from the company.",
)
FRUIT = (
    "she ate a crisp red apple for lunch.",
    "he peeled the apple and cut it into slices for the pie.",
    "the apple fell from the tree in the orchard.",
    "a ripe apple is sweet and full of juice.",
    "grandma baked an apple pie with cinnamon and sugar.",
)
SPECIAL = frozenset({"[CLS]", "[SEP]", "[PAD]"})


@dataclass
class WordInContext:
    """One sentence: its tokens, the word's position, the word's vector after the embedding table (layer
    0) and after each block, (L+1, D), and its attention row per layer (heads averaged), (L, n)."""

    sentence: str
    sense: str
    tokens: list[str]
    position: int
    vectors: np.ndarray
    attention: np.ndarray


def word_in_context(
    encoder: Encoder, embedder: Embedder, tokenizer: Tokenizer, sentence: str, sense: str, word: str
) -> WordInContext:
    """Run one sentence; the word must be a single token of the vocabulary (checked)."""
    batch = tokenizer.collate([tokenizer(sentence)])
    name = id_namer(tokenizer)
    assert name is not None, "word_in_context needs a tokenizer with token strings"
    tokens = [name(int(i)) for i in batch["input_ids"][0]]
    if word not in tokens:
        raise ValueError(f"{word!r} is not one token of {sentence!r} (tokens: {tokens}); choose another word")
    position = tokens.index(word)
    hidden: list[torch.Tensor] = []
    hooks = [
        block.register_forward_hook(lambda _m, _i, out: hidden.append(out[0])) for block in encoder.blocks
    ]
    try:
        maps = attention_maps(encoder, embedder, batch, tokenizer)
    finally:
        for hook in hooks:
            hook.remove()
    # Layer 0: the static row of the embedding table, the same vector wherever the word appears.
    static = embedder.token_embed.weight[batch["input_ids"][0, position]].detach()
    R = encoder.config.register_tokens  # block outputs lead with the register tokens
    vectors = torch.stack([static, *(h[R + position] for h in hidden)]).float().numpy()  # (L+1, D)
    attention = np.stack([w[0].mean(axis=0)[position] for w in maps.weights])  # (L, n)
    return WordInContext(sentence, sense, tokens, position, vectors, attention)


def cosine_by_layer(words: Sequence[WordInContext]) -> dict[str, list[float]]:
    """Mean cosine similarity per layer (0 = the static embedding) within each sense and across senses."""
    unit = [w.vectors / np.linalg.norm(w.vectors, axis=-1, keepdims=True) for w in words]
    within: list[np.ndarray] = []
    across: list[np.ndarray] = []
    for (a, ua), (b, ub) in itertools.combinations(zip(words, unit, strict=True), 2):
        (within if a.sense == b.sense else across).append((ua * ub).sum(axis=-1))
    return {
        "within_sense": np.mean(within, axis=0).tolist(),
        "across_senses": np.mean(across, axis=0).tolist(),
    }


def top_context(word: WordInContext, layer: int, k: int = 3) -> list[tuple[str, float]]:
    """The k words (not [CLS]/[SEP], not the word itself) the word attends to most in `layer` (0-based)."""
    row = word.attention[layer]
    ranked = [i for i in np.argsort(-row) if i != word.position and word.tokens[i] not in SPECIAL]
    return [(word.tokens[i], round(float(row[i]), 4)) for i in ranked[:k]]


def summarise(words: Sequence[WordInContext], model: str, word: str) -> dict[str, Any]:
    cos = cosine_by_layer(words)
    layers = len(cos["within_sense"])
    return {
        "model": model,
        "word": word,
        "layers": ["static input embedding", *(f"block {i}" for i in range(1, layers))],
        "cosine_within_sense": [round(c, 4) for c in cos["within_sense"]],
        "cosine_across_senses": [round(c, 4) for c in cos["across_senses"]],
        "gap_within_minus_across": [
            round(a - b, 4) for a, b in zip(cos["within_sense"], cos["across_senses"], strict=True)
        ],
        "sentences": [
            {
                "sense": w.sense,
                "sentence": w.sentence,
                "tokens": w.tokens,
                "attention_share_to_cls_sep_last_layer": round(
                    float(sum(w.attention[-1][i] for i, t in enumerate(w.tokens) if t in SPECIAL)), 4
                ),
                "top_context_words_by_layer": [top_context(w, layer) for layer in range(len(w.attention))],
            }
            for w in words
        ],
    }


def plot_polysemy(words: Sequence[WordInContext], summary: dict[str, Any], path: Path) -> Path:
    """One panel per sentence (the word's attention, layers × tokens) and the cosine curves below them."""
    from tabrasa.plotting import pyplot, save

    plt = pyplot()
    senses = sorted({w.sense for w in words}, key=[w.sense for w in words].index)
    per_sense = [[w for w in words if w.sense == s] for s in senses]
    rows = max(len(group) for group in per_sense)
    fig = plt.figure(figsize=(12, 1.55 * rows + 3.4))
    grid = fig.add_gridspec(rows + 2, len(senses), height_ratios=[1] * rows + [0.05, 2.0])
    for col, group in enumerate(per_sense):
        for row, w in enumerate(group):
            ax = fig.add_subplot(grid[row, col])
            # [CLS] and [SEP] take most of BERT's attention (a sink, Clark et al. 2019): left out so the
            # words show; each layer's row is scaled to its maximum.
            keep = [i for i, t in enumerate(w.tokens) if t not in SPECIAL]
            shown = w.attention[:, keep] / w.attention[:, keep].max(axis=1, keepdims=True)
            ax.imshow(shown, aspect="auto", cmap="Blues", vmin=0, vmax=1)
            ax.set_xticks(range(len(keep)), [w.tokens[i] for i in keep], rotation=45, fontsize=7, ha="right")
            ax.get_xticklabels()[keep.index(w.position)].set_color("crimson")
            layers = len(w.attention)
            ax.set_yticks(range(layers), [str(i + 1) for i in range(layers)], fontsize=6)
            ax.set_ylabel("layer", fontsize=7)
            if row == 0:
                ax.set_title(
                    f"'{summary['word']}' as {w.sense}: its attention over the words "
                    f"([CLS]/[SEP] left out, row max = 1)",
                    fontsize=8.5,
                )
    ax = fig.add_subplot(grid[rows + 1, :])
    layers = np.arange(len(summary["cosine_within_sense"]))
    ax.plot(layers, summary["cosine_within_sense"], "o-", label="within one sense")
    ax.plot(layers, summary["cosine_across_senses"], "s-", label="across the two senses")
    ax.set_xticks(layers, ["static\nembedding", *(f"block {i}" for i in layers[1:])], fontsize=8)
    ax.set_ylabel("cosine similarity")
    ax.set_title(f"'{summary['word']}' contextual vectors ({summary['model']})", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)


def run_study(
    encoder: Encoder,
    embedder: Embedder,
    tokenizer: Tokenizer,
    model: str,
    out: Path,
    word: str = "apple",
    senses: dict[str, Sequence[str]] | None = None,
    notes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every sentence of every sense through the model; writes polysemy.json (with `notes` added) and
    polysemy.png into `out`."""
    import json

    senses = senses or {"phone maker": PHONE, "fruit": FRUIT}
    words = [
        word_in_context(encoder, embedder, tokenizer, sentence, sense, word)
        for sense, sentences in senses.items()
        for sentence in sentences
    ]
    summary = {**summarise(words, model, word), **(notes or {})}
    out.mkdir(parents=True, exist_ok=True)
    (out / "polysemy.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    plot_polysemy(words, summary, out / "polysemy.png")
    return summary
