"""Text: Hugging Face `tokenizers` for subwords (trained here or loaded), an embedding table for tokens.

Training, normalisation, pre-tokenisation and post-processing are the `tokenizers` library's; tabrasa adds
the explicit truncation policy (counted, never silent) and the link to the embedder.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import torch
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers
from torch import nn

from tabrasa.tokenizers.base import (
    Batch,
    Embedder,
    Tokenizer,
    Tokens,
    check_token_ids,
    collate_labels,
    pad_sequences,
    with_label,
)
from tabrasa.tokenizers.specs import Grid, Spec, register_embedder, register_tokenizer
from tabrasa.tokenizers.trainer_order import END_OF_WORD, hashed_pieces, without_extra_specials
from tabrasa.tokenizers.truncation import TruncationPolicy, truncate

SubwordKind = Literal["wordpiece", "bpe"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_subword_tokenizer(
    corpus: Iterable[str], kind: SubwordKind = "wordpiece", vocab_size: int = 16000, lowercase: bool = True
) -> HFTokenizer:
    """Train a BERT-style ([CLS] text [SEP]) WordPiece or BPE vocabulary on `corpus`: the same texts give
    the same vocabulary and ids in every process (tabrasa/tokenizers/trainer_order.py says why that needs
    help). The texts are read twice, so an iterator is held in memory as a list."""
    texts = corpus if isinstance(corpus, Sequence) else list(corpus)
    if kind == "wordpiece":
        tok = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.decoder = decoders.WordPiece()
    elif kind == "bpe":
        # The end-of-word suffix lets the decoder put spaces back between words.
        tok = HFTokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix=END_OF_WORD))
        tok.decoder = decoders.BPEDecoder(suffix=END_OF_WORD)
    else:
        raise ValueError(f"subword kind={kind!r} is not known; choose wordpiece or bpe")
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    ordered = [*SPECIALS, *hashed_pieces(tok, texts, kind)]
    if kind == "wordpiece":
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=ordered)
    else:
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=ordered, end_of_word_suffix=END_OF_WORD
        )
    tok.train_from_iterator(texts, trainer=trainer)
    tok = without_extra_specials(tok, SPECIALS)
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return tok


def load_subword_tokenizer(path: str | Path, lowercase: bool = True) -> HFTokenizer:
    """Load a `tokenizer.json`, a BERT `vocab.txt`, or a folder holding either."""
    path = Path(path)
    if path.is_dir():
        for name in ("tokenizer.json", "vocab.txt"):
            if (path / name).exists():
                path = path / name
                break
        else:
            raise FileNotFoundError(f"{path} holds neither tokenizer.json nor vocab.txt")
    if not path.exists():
        raise FileNotFoundError(f"text tokenizer file {path} does not exist")
    if path.suffix == ".json":
        tok = HFTokenizer.from_file(str(path))
        # A saved tokenizer.json may carry fixed padding and truncation (MiniLM's pads every text to 128 and
        # cuts longer ones): tabrasa pads per batch and truncates only by its own counted policy.
        tok.no_padding()
        tok.no_truncation()
        return tok
    if path.suffix == ".txt":
        from tokenizers.implementations import BertWordPieceTokenizer

        return BertWordPieceTokenizer(str(path), lowercase=lowercase)._tokenizer
    raise ValueError(f"{path}: expected a tokenizer.json or vocab.txt file")


def check_text(text: object, source: str, who: str) -> str:
    """`text` if it is a str that UTF-8 can encode; otherwise an error naming the input and the fix."""
    if not isinstance(text, str):
        hint = ""
        if isinstance(text, bytes):
            hint = "; decode it first, e.g. data.decode('utf-8', errors='replace')"
        raise TypeError(f"{source} is {type(text).__name__}; {who} takes str{hint}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:  # lone surrogates, e.g. bytes decoded with errors='surrogateescape'
        raise ValueError(
            f"{source} is not valid Unicode: {text[err.start : err.end]!r} at character {err.start} is a "
            f"lone surrogate; decode its bytes with errors='replace' (or clean the text)"
        ) from err
    return text


class TextTokenizer(Tokenizer):
    """Raw string → `input_ids` (with the tokenizer's special tokens) and `truncated` (tokens removed).

    truncation: "error" raises on a text longer than max_length; "head", "tail", "head_tail" cut and report
    how many tokens were removed, so a data module can count and log them.
    """

    def __init__(
        self,
        tokenizer: HFTokenizer,
        max_length: int = 512,
        truncation: TruncationPolicy = "head",
    ) -> None:
        self.hf = tokenizer
        self.max_length = max_length
        self.truncation = truncation
        pad = tokenizer.token_to_id("[PAD]")
        if pad is None:
            pad = tokenizer.token_to_id("<pad>")
        if pad is None:
            raise ValueError("text tokenizer has no [PAD] or <pad> token; add one to its vocabulary")
        self.pad_id = pad
        # Special tokens the post-processor wraps a single text in, kept when truncating.
        special = tokenizer.encode("a").special_tokens_mask  # e.g. [1, 0, 1] for [CLS] a [SEP]
        content = [i for i, s in enumerate(special) if not s]
        self._prefix = content[0] if content else 0
        self._suffix = len(special) - content[-1] - 1 if content else 0

    @property
    def vocab_size(self) -> int:
        return self.hf.get_vocab_size()

    def encode_ids(self, text: str, source: str = "text") -> tuple[list[int], int]:
        """One text → (ids with the special tokens, tokens removed by truncation)."""
        ids = self.hf.encode(check_text(text, source, type(self).__name__)).ids
        return truncate(ids, self.max_length, self.truncation, self._prefix, self._suffix, source)

    def encode(self, raw: str | Mapping[str, object]) -> Batch:
        """A text, or a mapping with `text` and an optional `label` → `input_ids` and `truncated`."""
        text = raw["text"] if isinstance(raw, Mapping) else raw
        ids, removed = self.encode_ids(text)  # type: ignore[arg-type]
        out = {"input_ids": torch.tensor(ids, dtype=torch.long), "truncated": torch.tensor(removed)}
        return with_label(out, raw)

    def encode_batch(self, raws: Sequence[str | Mapping[str, object]]) -> Batch:
        """Texts → one padded Batch through the `tokenizers` library's batched (Rust) encoder."""
        texts = [check_text(r["text"] if isinstance(r, Mapping) else r, f"text #{i}", type(self).__name__)
                 for i, r in enumerate(raws)]  # fmt: skip
        encoded = self.hf.encode_batch(texts)
        cut = [
            truncate(e.ids, self.max_length, self.truncation, self._prefix, self._suffix, f"text #{i}")
            for i, e in enumerate(encoded)
        ]
        ids, mask = pad_sequences([torch.tensor(ids, dtype=torch.long) for ids, _ in cut], self.pad_id)
        batch = {"input_ids": ids, "attention_mask": mask, "truncated": torch.tensor([n for _, n in cut])}
        return collate_labels([with_label({}, r) for r in raws], batch)

    def collate(self, examples: Sequence[Batch]) -> Batch:
        ids, mask = pad_sequences([e["input_ids"] for e in examples], self.pad_id)
        batch = {"input_ids": ids, "attention_mask": mask}
        if "truncated" in examples[0]:
            batch["truncated"] = torch.stack([e["truncated"] for e in examples])
        return collate_labels(examples, batch)

    def embedder(self, dim: int) -> TextEmbedder:
        return TextEmbedder(self.vocab_size, dim, self.pad_id)

    def save(self, path: str | Path) -> None:
        self.hf.save(str(path))

    def to_spec(self, file: str = "tokenizer.json") -> TextTokenizerSpec:
        """The spec of this tokenizer once `save`d as `file` beside the weights."""
        return TextTokenizerSpec(file, self.max_length, truncation=self.truncation)

    @classmethod
    def from_spec(cls, spec: TextTokenizerSpec, folder: Path) -> TextTokenizer:
        hf = load_subword_tokenizer(folder / spec.file, lowercase=spec.lowercase)
        return cls(hf, max_length=spec.max_length, truncation=spec.truncation)


def ids_moved(a: Tokenizer, b: Tokenizer) -> int | None:
    """How many of `a`'s tokens have another id in `b` (0: one vocabulary), reading a pretrained family's
    tokenizer through to the text tokenizer it wraps; None when either is no text tokenizer. Two
    vocabularies of one size fit the same token table while their ids name other tokens."""
    a, b = getattr(a, "inner", a), getattr(b, "inner", b)
    if not isinstance(a, TextTokenizer) or not isinstance(b, TextTokenizer):
        return None
    ours, theirs = a.hf.get_vocab(), b.hf.get_vocab()
    if ours == theirs:
        return 0
    return max(1, sum(theirs.get(token) != i for token, i in ours.items()))  # b may only add tokens


@dataclass(frozen=True)
class TextTokenizerSpec(Spec):
    """file: tokenizer.json or vocab.txt beside the weights; lowercase applies to vocab.txt only."""

    kind = "text"
    file: str
    max_length: int
    lowercase: bool = True
    truncation: TruncationPolicy = "head"

    def fitted(self, max_len: int, grid: Grid | None) -> TextTokenizerSpec:
        return replace(self, max_length=max_len)

    def files(self) -> list[str]:
        return [self.file]


@dataclass(frozen=True)
class TextEmbedderSpec(Spec):
    """pad_id None: no padding row (GPT-2 has no pad token, so no row may be frozen as padding)."""

    kind = "text"
    vocab_size: int
    pad_id: int | None = 0
    type_vocab_size: int = 0


class TextEmbedder(Embedder):
    """Token ids (B, N) → vectors (B, N, D); optional segment (token-type) table as in BERT."""

    def __init__(self, vocab_size: int, dim: int, pad_id: int = 0, type_vocab_size: int = 0) -> None:
        super().__init__()
        self.dim = dim
        self.vocab_size = vocab_size
        self.token_embed = nn.Embedding(vocab_size, dim, padding_idx=pad_id)
        self.type_embed = nn.Embedding(type_vocab_size, dim) if type_vocab_size else None
        nn.init.trunc_normal_(self.token_embed.weight, std=0.02)

    def to_spec(self) -> TextEmbedderSpec:
        types = self.type_embed.num_embeddings if self.type_embed is not None else 0
        return TextEmbedderSpec(self.vocab_size, self.token_embed.padding_idx, types)

    @classmethod
    def from_spec(cls, spec: TextEmbedderSpec, dim: int) -> TextEmbedder:
        embedder = cls(spec.vocab_size, dim, spec.pad_id or 0, spec.type_vocab_size)
        if spec.pad_id is None:
            embedder.token_embed.padding_idx = None
        return embedder

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens:
        ids = batch["input_ids"]
        check_token_ids(ids, self.vocab_size, "token", f"the vocabulary has {self.vocab_size} entries")
        x = self.token_embed(ids)
        if self.type_embed is not None:
            types = batch.get("token_type_ids")
            x = x + (self.type_embed(types) if types is not None else self.type_embed.weight[0])
        mask = batch.get("attention_mask")
        mask = torch.ones_like(ids, dtype=torch.bool) if mask is None else mask.bool()
        return Tokens(x, mask)


register_tokenizer(TextTokenizer, TextTokenizerSpec)
register_embedder(TextEmbedder, TextEmbedderSpec)
