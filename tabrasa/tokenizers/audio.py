"""Audio: a log-mel spectrogram (torchaudio) cut into frame tokens or time × frequency patch tokens.

Frames: each 10 ms frame's mel vector is one token (a Linear), the sequence order is the structure.
Patches: the spectrogram is a one-channel image of time × mel bins cut into (p_t, p_f) patches by a
Conv2d named `proj`, as in AST (Gong et al. 2021), with the grid's rows along time. SpecAugment (Park et
al. 2019) masks one frequency band and one time span of the normalised features, in train mode only.

A checkpoint stores the preprocessing as an `AudioTokenizerSpec` and the embedder's shape as an
`AudioEmbedderSpec` (kind "audio" both); SpecAugment is a training choice and is not part of either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, get_args

import torch
import torchaudio.transforms
from torch import nn

from tabrasa.backbone.tokens import TokenGrid
from tabrasa.tokenizers.audio_features import LogMel, WaveformInput, as_mono, normalizer
from tabrasa.tokenizers.base import (
    Batch,
    Embedder,
    Tokenizer,
    Tokens,
    collate_labels,
    learned_token,
    pad_sequences,
    with_label,
)
from tabrasa.tokenizers.image import as_pair
from tabrasa.tokenizers.permutation import check_seed, permute_cells
from tabrasa.tokenizers.specs import Grid, Spec, register_embedder, register_tokenizer
from tabrasa.tokenizers.truncation import TruncationPolicy, truncate

# AudioSet log-mel statistics AST (Gong et al. 2021) uses for its close 128-bin Kaldi log-mel. Datasets
# differ (espeak-ng words with digital silence: about -8 ± 6); `mel_statistics` measures a dataset's own.
DEFAULT_MEAN, DEFAULT_STD = -4.27, 4.57


class AudioTokenizer(Tokenizer):
    """Waveform → `features` (frames, n_mels): downmixed, resampled, log-mel, normalised, maybe masked.

    An example is a waveform ((T,) or (C, T) float tensor or numpy array, channels averaged to mono) or a
    mapping with it under `audio`/`array`/`waveform`, its rate under `sample_rate`/`sampling_rate` (as
    Hugging Face `datasets` Audio gives), and an optional `label`. `input_sample_rate` is the rate assumed
    when an example carries none. Features are resampled to `sample_rate` first, then framed (see
    `audio_features`: 1 + samples // hop frames; 1 s at 16 kHz → 101).

    max_frames / truncation: longer clips raise ("error") or lose frames at the end ("head"), start
    ("tail") or middle ("head_tail"); the number removed is returned as `truncated`, counted like text.
    patch_size: None for frame tokens, or (p_t, p_f) for patch tokens (p_f must divide n_mels).
    freq_mask / time_mask: SpecAugment's largest masked band in mel bins / span in frames, train mode only.
    permute_elements_seed: the permutation test of Perceiver (Jaegle et al. 2021): after normalisation and
    SpecAugment, every clip is padded to max_frames frames (with 0, the normalised mean) and its
    max_frames × n_mels cells move by one fixed permutation drawn from this seed, the same for every clip
    in training and evaluation, before frames or patches are cut. Padding cannot stay at the end then, so
    the mask is honest about what it can say: a frame is real if any of its cells came from a real frame,
    and the padding cells it holds are seen as values. Clips of one length that max_frames matches (the
    1-second keyword clips) have no padding at all.
    """

    def __init__(
        self,
        sample_rate: int = 16000,
        input_sample_rate: int | None = None,
        n_mels: int = 64,
        win_ms: float = 25.0,
        hop_ms: float = 10.0,
        mean: float | Sequence[float] = DEFAULT_MEAN,
        std: float | Sequence[float] = DEFAULT_STD,
        patch_size: int | Sequence[int] | None = None,
        max_frames: int = 1024,
        truncation: TruncationPolicy = "head",
        train: bool = False,
        freq_mask: int = 8,
        time_mask: int = 20,
        cls_token: bool = True,
        permute_elements_seed: int | None = None,
    ) -> None:
        self.log_mel = LogMel(sample_rate, n_mels, win_ms, hop_ms)
        self.win_ms, self.hop_ms = float(win_ms), float(hop_ms)
        self.input_sample_rate = input_sample_rate
        # The statistics as given (one value, or one per bin) for the spec: the float32 tensors below
        # would store -4.27 as -4.269999980926514.
        self.stats = (_plain(mean), _plain(std))
        self.mean = normalizer(mean, n_mels, "mean")
        self.std = normalizer(std, n_mels, "std")
        if bool((self.std <= 0).any()):
            raise ValueError(f"std={std} must be positive in every mel bin")
        self.patch_size = None if patch_size is None else as_pair(patch_size, "patch_size")
        if self.patch_size is not None and n_mels % self.patch_size[1]:
            raise ValueError(
                f"patch_size={self.patch_size}: its {self.patch_size[1]} mel bins must divide n_mels={n_mels}"
            )
        if max_frames < 1:
            raise ValueError(f"max_frames={max_frames} must be >= 1")
        if truncation not in get_args(TruncationPolicy):
            raise ValueError(f"truncation={truncation!r} is not known; choose error, head, tail or head_tail")
        if freq_mask < 0 or time_mask < 0:
            raise ValueError(
                f"freq_mask={freq_mask} and time_mask={time_mask} must be >= 0 (0 turns one off)"
            )
        self.max_frames = max_frames
        self.truncation = truncation
        self.training = train
        self.freq_masking = torchaudio.transforms.FrequencyMasking(freq_mask)
        self.time_masking = torchaudio.transforms.TimeMasking(time_mask)
        # For batches: one mask drawn per example (iid_masks needs the 4-D (B, C, freq, time) layout).
        self.batch_freq_masking = torchaudio.transforms.FrequencyMasking(freq_mask, iid_masks=True)
        self.batch_time_masking = torchaudio.transforms.TimeMasking(time_mask, iid_masks=True)
        self.cls_token = cls_token
        self.permute_elements_seed = (
            None
            if permute_elements_seed is None
            else check_seed(permute_elements_seed, "AudioTokenizer permute_elements_seed")
        )

    @property
    def n_mels(self) -> int:
        return self.log_mel.n_mels

    @property
    def sample_rate(self) -> int:
        return self.log_mel.sample_rate

    @property
    def max_tokens(self) -> int:
        """Longest token sequence a batch can hold (CLS included): what a learned position table needs."""
        if self.patch_size is None:
            return int(self.cls_token) + self.max_frames
        pt, pf = self.patch_size
        rows = -(-self.max_frames // pt)  # collate pads time up to a multiple of p_t
        return int(self.cls_token) + rows * (self.n_mels // pf)

    def encode(self, raw: WaveformInput | Mapping[str, Any], sample_rate: int | None = None) -> Batch:
        """A waveform (at `sample_rate`, else `input_sample_rate`) or a mapping holding one (see the class
        docstring) → `features` (frames, n_mels) and `truncated` (frames removed); masked in train mode."""
        if not isinstance(raw, Mapping):
            return self.encode_wave(raw, sample_rate or self.input_sample_rate)
        if isinstance(raw.get("audio"), Mapping):  # Hugging Face datasets: {"audio": {"array", ...}}
            return self.encode({**raw["audio"], **{k: v for k, v in raw.items() if k != "audio"}})
        keys = [k for k in ("audio", "array", "waveform") if k in raw]
        if not keys:
            raise KeyError(f"audio example has keys {sorted(raw)}; put the waveform under audio or array")
        rate = raw.get("sample_rate", raw.get("sampling_rate", sample_rate or self.input_sample_rate))
        out = self.encode_wave(raw[keys[0]], rate, source=f"audio {raw.get('id', '')}".strip())
        return with_label(out, raw)

    def encode_wave(self, wave: WaveformInput, sample_rate: int | None, source: str = "audio") -> Batch:
        """A waveform at `sample_rate` → `features` (frames, n_mels) and `truncated` (frames removed)."""
        if sample_rate is None:
            raise ValueError(
                f"{source} carries no sample rate; give it with the example (sample_rate=...) or build "
                f"AudioTokenizer(input_sample_rate=...)"
            )
        features = self.log_mel(as_mono(wave, source), int(sample_rate), source)  # (frames, n_mels)
        features = (features - self.mean) / self.std
        if self.truncation == "error" and len(features) > self.max_frames:
            raise ValueError(
                f"{source} has {len(features)} frames, more than max_frames={self.max_frames}; raise "
                f"max_frames or choose truncation: head, tail or head_tail"
            )
        kept, removed = truncate(list(range(len(features))), self.max_frames, self.truncation, 0, 0, source)
        if removed:
            features = features[kept]
        if self.training:
            features = self.spec_augment(features)
        if self.permute_elements_seed is not None:
            features, frame_mask = self.permute_elements(features)
            return {"features": features, "frame_mask": frame_mask, "truncated": torch.tensor(removed)}
        return {"features": features, "truncated": torch.tensor(removed)}

    def encode_batch(self, raws: Sequence[WaveformInput | Mapping[str, Any]]) -> Batch:
        """Equal-length mono waveforms at the tokenizer's own rate (`input_sample_rate == sample_rate`) go
        through one STFT and one masking call for the batch (for 1-second keyword clips the per-clip calls
        cost more than the model's step spends on the clip); anything else clip by clip."""
        same = (
            self.input_sample_rate == self.sample_rate
            and len(raws) > 0
            and all(isinstance(r, torch.Tensor) and r.ndim == 1 and r.is_floating_point() for r in raws)
            and len({len(r) for r in raws}) == 1  # type: ignore[arg-type]
        )
        if not same:
            return super().encode_batch(raws)
        waves = torch.stack(list(raws))  # type: ignore[arg-type]  # (B, samples)
        features = self.log_mel.log_mel(waves, "audio batch")  # (B, n_mels, frames)
        if features.shape[-1] > self.max_frames:
            return super().encode_batch(raws)  # the truncation policy works clip by clip
        features = (features - self.mean[:, None]) / self.std[:, None]
        if self.training:
            features = self.batch_time_masking(self.batch_freq_masking(features[:, None]))[:, 0]
        features = features.transpose(1, 2).contiguous()  # (B, frames, n_mels)
        mask = torch.ones(features.shape[:2], dtype=torch.bool)
        if self.permute_elements_seed is not None:
            features, mask = self.permute_elements(features)
        return self._pad_to_patches(features, mask, torch.zeros(len(waves), dtype=torch.long))

    def permute_elements(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Normalised features (..., T, n_mels) → padded to max_frames with 0 and their cells moved by the
        fixed permutation, and the frame mask (..., max_frames): True where a frame holds a real cell."""
        assert self.permute_elements_seed is not None
        seed, extra = self.permute_elements_seed, self.max_frames - features.shape[-2]
        real = torch.ones(features.shape, dtype=torch.bool, device=features.device)  # (..., T, F)
        features = nn.functional.pad(features, (0, 0, 0, extra))  # (..., max_frames, F)
        real = nn.functional.pad(real, (0, 0, 0, extra), value=False)
        return permute_cells(features, seed), permute_cells(real, seed).any(dim=-1)

    def spec_augment(self, features: torch.Tensor) -> torch.Tensor:
        """Mask one band of mel bins and one span of frames with 0, the normalised mean (Park et al. 2019)."""
        spec = features.T[None]  # (1, n_mels, frames): torchaudio's (..., freq, time)
        return self.time_masking(self.freq_masking(spec))[0].T.contiguous()

    def collate(self, examples: Sequence[Batch]) -> Batch:
        """Pad frames to the longest (for patches: to a multiple of p_t); `frame_mask` marks real frames."""
        features, mask = pad_sequences([e["features"] for e in examples], 0.0)  # (B, T, F), (B, T)
        if "frame_mask" in examples[0]:  # permuted cells: each clip says which of its frames hold real ones
            mask = torch.stack([e["frame_mask"] for e in examples])
        truncated = torch.stack([torch.as_tensor(e.get("truncated", 0)) for e in examples])
        return collate_labels(examples, self._pad_to_patches(features, mask, truncated))

    def _pad_to_patches(self, features: torch.Tensor, mask: torch.Tensor, truncated: torch.Tensor) -> Batch:
        if self.patch_size is not None and features.shape[1] % self.patch_size[0]:
            extra = self.patch_size[0] - features.shape[1] % self.patch_size[0]
            features = nn.functional.pad(features, (0, 0, 0, extra))
            mask = nn.functional.pad(mask, (0, extra), value=False)
        return {"features": features, "frame_mask": mask, "truncated": truncated}

    def embedder(self, dim: int) -> AudioEmbedder:
        return AudioEmbedder(self.n_mels, dim, self.patch_size, cls_token=self.cls_token)

    def to_spec(self) -> AudioTokenizerSpec:
        """The preprocessing a checkpoint needs (SpecAugment is a training choice, not part of it)."""
        return AudioTokenizerSpec(
            self.sample_rate, self.n_mels, self.win_ms, self.hop_ms, *self.stats, self.patch_size,
            self.max_frames, self.truncation, self.cls_token, self.input_sample_rate,
            self.permute_elements_seed,
        )  # fmt: skip

    @classmethod
    def from_spec(cls, spec: AudioTokenizerSpec, folder: Path | None = None) -> AudioTokenizer:
        return cls(
            spec.sample_rate, spec.input_sample_rate, spec.n_mels, spec.win_ms, spec.hop_ms, spec.mean,
            spec.std, spec.patch_size, spec.max_frames, spec.truncation, cls_token=spec.cls_token,
            permute_elements_seed=spec.permute_elements_seed,
        )  # fmt: skip


def _plain(value: float | Sequence[float]) -> float | tuple[float, ...]:
    return float(value) if isinstance(value, int | float) else tuple(float(v) for v in value)


@dataclass(frozen=True)
class AudioTokenizerSpec(Spec):
    """mean, std: one value for every mel bin or one per bin. patch_size: None for frame tokens.
    input_sample_rate: the rate assumed for a waveform that carries none (None: each must carry one).
    permute_elements_seed: the fixed cell permutation the model was trained with (None: none)."""

    kind = "audio"
    sample_rate: int
    n_mels: int
    win_ms: float
    hop_ms: float
    mean: float | tuple[float, ...]
    std: float | tuple[float, ...]
    patch_size: Grid | None
    max_frames: int
    truncation: TruncationPolicy = "head"
    cls_token: bool = True
    input_sample_rate: int | None = None
    permute_elements_seed: int | None = None

    def fitted(self, max_len: int, grid: Grid | None) -> AudioTokenizerSpec:
        """max_frames from the positions: every row after the class token is a frame, or for patches
        one of the n_mels / p_f patches of a row of p_t frames."""
        frames = max_len - int(self.cls_token)
        if self.patch_size is not None:
            frames = frames // (self.n_mels // self.patch_size[1]) * self.patch_size[0]
        if frames < 1:
            raise ValueError(
                f"max_len={max_len} leaves no position for a frame (or a row of patches) after the class "
                f"token; raise max_len"
            )
        return replace(self, max_frames=frames)


@dataclass(frozen=True)
class AudioEmbedderSpec(Spec):
    kind = "audio"
    n_mels: int
    patch_size: Grid | None
    cls_token: bool = True


class AudioEmbedder(Embedder):
    """features (B, T, F) → [CLS] + frame tokens (B, 1 + T, D) or patch tokens (B, 1 + T/p_t · F/p_f, D)."""

    def __init__(
        self, n_mels: int, dim: int, patch_size: int | Sequence[int] | None = None, cls_token: bool = True
    ) -> None:
        super().__init__()
        self.dim = dim
        self.n_mels = n_mels
        self.patch_size = None if patch_size is None else as_pair(patch_size, "patch_size")
        if self.patch_size is None:
            self.proj: nn.Module = nn.Linear(n_mels, dim)
        else:
            self.proj = nn.Conv2d(1, dim, kernel_size=self.patch_size, stride=self.patch_size)
        self.cls_token = learned_token(dim) if cls_token else None

    def to_spec(self) -> AudioEmbedderSpec:
        return AudioEmbedderSpec(self.n_mels, self.patch_size, self.cls_token is not None)

    @classmethod
    def from_spec(cls, spec: AudioEmbedderSpec, dim: int) -> AudioEmbedder:
        return cls(spec.n_mels, dim, spec.patch_size, cls_token=spec.cls_token)

    def no_weight_decay(self) -> set[str]:
        """The class token is an embedding, not a map: weight decay would only shrink it (timm's hook)."""
        return {"cls_token"} if self.cls_token is not None else set()

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens:
        features = batch["features"]
        B, T, F = features.shape
        frame_mask = batch.get("frame_mask")
        frame_mask = (
            torch.ones(B, T, dtype=torch.bool, device=features.device) if frame_mask is None else frame_mask
        )
        if self.patch_size is None:
            self._check(self.n_mels == F, features)
            x, mask, grid = self.proj(features), frame_mask.bool(), (T, 1)  # (B, T, D)
        else:
            pt = self.patch_size[0]
            self._check(self.n_mels == F and T % pt == 0, features)
            x = self.proj(features[:, None])  # (B, D, T/p_t, F/p_f)
            grid = (x.shape[2], x.shape[3])
            x = x.flatten(2).transpose(1, 2)  # (B, N, D), rows along time
            # A patch is real if any of its frames is: only patches wholly in the padding are masked.
            rows = frame_mask.bool().view(B, grid[0], pt).any(dim=-1)  # (B, T/pt)
            mask = rows[:, :, None].expand(B, grid[0], grid[1]).reshape(B, -1)  # (B, N)
        if self.cls_token is not None:
            x = torch.cat([self.cls_token.expand(B, -1, -1), x], dim=1)
            mask = torch.cat([mask.new_ones(B, 1), mask], dim=1)
        return Tokens(x, mask, TokenGrid(*grid, prefix=int(self.cls_token is not None)))

    def _check(self, ok: bool, features: torch.Tensor) -> None:
        if not ok:
            raise ValueError(
                f"features have shape {tuple(features.shape)} but the embedder takes {self.n_mels} mel "
                f"bins and patch size {self.patch_size}; the tokenizer and the embedder do not match"
            )


register_tokenizer(AudioTokenizer, AudioTokenizerSpec)
register_embedder(AudioEmbedder, AudioEmbedderSpec)
