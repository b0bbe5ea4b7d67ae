"""The permutation test: the transformer's exact invariance to token order (and counter-tests that fail it),
the token and element permutations as fixed bijections with honest masks, the table from hand-written
runs, and a tiny end-to-end sweep that resumes without retraining."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
from pathlib import Path
from types import ModuleType

import pytest
import torch
from torch import nn

from benchmarks.evidence.permutation import (
    INVARIANCE_TEST,
    KEY_FIELDS,
    PERMUTATION_SEED,
    PERMUTATION_TASKS,
    PermutationKey,
    PermutationTask,
    arms_of,
    cli_args,
    summarise_permutation_bench,
)
from benchmarks.evidence.permutation_report import permutation_table
from benchmarks.evidence.rate_sweep import Budget, RunLog
from tabrasa.backbone import Encoder, EncoderConfig, PatchGridCNN, SequenceCNN, SequenceLSTM, TokenGrid
from tabrasa.tasks import Classifier
from tabrasa.tasks.pooling import pool
from tabrasa.tokenizers.audio import AudioTokenizer, AudioTokenizerSpec
from tabrasa.tokenizers.base import Tokens
from tabrasa.tokenizers.image import ImageTokenizer, ImageTokenizerSpec
from tabrasa.tokenizers.permutation import fixed_permutation, permute_cells, position_keys
from tabrasa.tokenizers.token_permutation import TokenPermutation

ROOT = Path(__file__).resolve().parents[2]
B, N, DIM = 2, 10, 32  # N tokens: a class token and 9 others
SLOTS = 12  # fixed-slot layout: every sequence padded to 1 + 12 tokens


def load_script() -> ModuleType:
    path = ROOT / "benchmarks" / "bench_permutation.py"
    spec = importlib.util.spec_from_file_location("bench_permutation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def encoder(positions: str) -> Encoder:
    torch.manual_seed(0)
    config = EncoderConfig(dim=DIM, depth=2, heads=4, max_len=16, positions=positions, dropout=0.0)
    return Encoder(config).eval()


def batch(padded: bool) -> Tokens:
    """B sequences of N tokens; with `padded`, the second has its last 3 tokens as (noisy) padding."""
    x = torch.randn(B, N, DIM)
    mask = torch.ones(B, N, dtype=torch.bool)
    if padded:
        mask[1, -3:] = False
        x[1, -3:] = 100 * torch.randn(3, DIM)
    return Tokens(x, mask)


def order_of(permutation: TokenPermutation, tokens: Tokens) -> torch.Tensor:
    """σ as gather indices (B, N'), read by permuting tokens that carry their own index: out[j] = in[σ[j]]
    (padding slots added by the layout read as index N and above)."""
    width = SLOTS + 1 if permutation.slots is not None else tokens.x.shape[1]
    index = torch.arange(tokens.x.shape[1], dtype=torch.float32)[None, :, None].expand(B, -1, 1)
    moved = permutation(Tokens(index + 1.0, tokens.mask, tokens.grid)).x[..., 0].long() - 1  # pads → -1
    pads = (moved < 0).cumsum(dim=1) - 1 + tokens.x.shape[1]  # the k-th added pad is index N + k
    assert moved.shape[1] == width
    return torch.where(moved < 0, pads, moved)


def right_padded(tokens: Tokens, width: int) -> Tokens:
    extra = width - tokens.x.shape[1]
    x = torch.cat([tokens.x, tokens.x.new_zeros(B, extra, DIM)], dim=1)
    return Tokens(x, torch.cat([tokens.mask, tokens.mask.new_zeros(B, extra)], dim=1), tokens.grid)


def with_rows_moved(model: Encoder, sigma: torch.Tensor) -> Encoder:
    """The same encoder whose position rows are permuted so row σ[j] holds the old row j: P' = P[σ⁻¹]."""
    moved = copy.deepcopy(model)
    assert moved.positions is not None
    with torch.no_grad():
        table = model.positions.weight[: len(sigma)]
        moved.positions.weight[sigma] = table
    return moved


def same_function(
    permuted_model: nn.Module, plain_model: nn.Module, permutation: TokenPermutation, tokens: Tokens
) -> bool:
    """Whether the model on permuted tokens equals `plain_model` on the unpermuted tokens read in σ order,
    at every real token (float tolerance 1e-6 relative to the outputs' scale) and after mean pooling."""
    sigma = order_of(permutation, tokens)
    permuted = permutation(tokens)
    plain = right_padded(tokens, permuted.x.shape[1])
    assert torch.equal(permuted.mask, plain.mask.gather(1, sigma)), "the mask must move with the tokens"
    out = permuted_model(permuted.x, permuted.mask, grid=permuted.grid)
    ref = plain_model(plain.x, plain.mask, grid=plain.grid)
    ref = ref.gather(1, sigma[..., None].expand(-1, -1, DIM))
    real = permuted.mask
    close = torch.allclose(out[real], ref[real], atol=1e-6, rtol=1e-5)
    pooled = torch.allclose(pool(out, real, "mean"), pool(ref, real, "mean"), atol=1e-6, rtol=1e-5)
    return close and pooled


@pytest.mark.parametrize(
    ("slots", "padded"),
    [(SLOTS, True), (None, False)],
    ids=["fixed-slots-with-padding", "real-first-fixed-length"],
)
def test_learned_positions_make_the_transformer_invariant_to_token_order(
    slots: int | None, padded: bool
) -> None:
    """A transformer on permuted tokens IS the unpermuted transformer with its position rows permuted."""
    model = encoder("learned")
    permutation = TokenPermutation(seed=PERMUTATION_SEED, slots=slots)
    tokens = batch(padded)
    sigma = order_of(permutation, tokens)[0]
    assert torch.equal(order_of(permutation, tokens)[1], sigma), "one permutation for every example"
    assert sigma[0] == 0 and not torch.equal(sigma, torch.arange(len(sigma))), "CLS first, the rest moved"
    assert same_function(model, with_rows_moved(model, sigma), permutation, tokens)


def test_without_moving_the_table_the_invariance_check_fails() -> None:
    model = encoder("learned")
    permutation = TokenPermutation(seed=PERMUTATION_SEED, slots=SLOTS)
    assert not same_function(model, model, permutation, batch(padded=True))


@pytest.mark.parametrize("positions", ["none", "rotary", "sinusoidal"])
def test_fixed_positions_are_not_invariant_and_no_positions_need_no_table(positions: str) -> None:
    """No learned table can absorb σ for rotary or sinusoidal positions: permuting changes the function.
    Without positions, attention is equivariant and the check passes with the model as it is."""
    model = encoder(positions)
    permutation = TokenPermutation(seed=PERMUTATION_SEED, slots=SLOTS)
    assert same_function(model, model, permutation, batch(padded=True)) == (positions == "none")


@pytest.mark.parametrize("name", ["sequence_cnn", "sequence_lstm", "grid_cnn"])
def test_the_baselines_are_not_invariant_to_token_order(name: str) -> None:
    torch.manual_seed(0)
    model = {
        "sequence_cnn": SequenceCNN(DIM, blocks=2, kernel_size=3, dropout=0.0),
        "sequence_lstm": SequenceLSTM(DIM, layers=2, dropout=0.0),
        "grid_cnn": PatchGridCNN(DIM, blocks=2, hidden=16, dropout=0.0),
    }[name].eval()
    tokens = batch(padded=False)
    if name == "grid_cnn":
        tokens = Tokens(tokens.x, tokens.mask, TokenGrid(3, 3, prefix=1))
    assert not same_function(model, model, TokenPermutation(seed=PERMUTATION_SEED), tokens)


def test_real_first_gives_a_position_the_same_place_whatever_the_batch_padding() -> None:
    permutation = TokenPermutation(seed=3)
    x = torch.randn(1, 7, DIM)
    alone = permutation(Tokens(x, torch.ones(1, 7, dtype=torch.bool)))
    longer = torch.randn(1, 12, DIM)
    both = torch.cat([torch.cat([x, torch.randn(1, 5, DIM)], dim=1), longer])
    mask = torch.ones(2, 12, dtype=torch.bool)
    mask[0, 7:] = False
    together = permutation(Tokens(both, mask))
    assert torch.equal(together.x[0, :7], alone.x[0]), "the batch's padding must not move real tokens"
    assert torch.equal(together.mask, mask), "real tokens first: the mask stays a prefix (LSTM-readable)"
    torch.testing.assert_close(together.x[0, 0], x[0, 0])  # the class token stays first
    # Among the first 7 positions the longer sequence keeps the order the shorter one has.
    rank = position_keys(3, 11)[:6].argsort().argsort()
    moved = together.x[1, 1:]
    at = [int((moved == longer[0, 1 + p]).all(dim=-1).nonzero()) for p in range(6)]
    assert torch.equal(torch.tensor(at).argsort().argsort(), rank)


def test_fixed_slots_put_a_position_in_one_slot_for_every_length() -> None:
    permutation = TokenPermutation(seed=1, slots=SLOTS)
    short, long = torch.randn(1, 5, DIM), torch.randn(1, 11, DIM)
    a = permutation(Tokens(short, torch.ones(1, 5, dtype=torch.bool)))
    b = permutation(Tokens(long, torch.ones(1, 11, dtype=torch.bool)))
    slots = 1 + fixed_permutation(1, SLOTS).argsort()  # where position 1 + p lands
    for p in range(4):
        assert torch.equal(a.x[0, slots[p]], short[0, 1 + p]) and torch.equal(
            b.x[0, slots[p]], long[0, 1 + p]
        )
    assert int(a.mask.sum()) == 5 and int(b.mask.sum()) == 11, "no padding becomes real"


def test_grid_tokens_permute_their_cells_and_keep_the_grid() -> None:
    grid = TokenGrid(2, 3, prefix=1)
    x = torch.arange(7.0)[None, :, None].expand(B, -1, DIM)
    out = TokenPermutation(seed=0)(Tokens(x, torch.ones(B, 7, dtype=torch.bool), grid))
    assert out.grid == grid and out.x[0, 0, 0] == 0
    assert sorted(out.x[0, :, 0].tolist()) == list(range(7)) and out.x[0, 1:, 0].tolist() != list(range(1, 7))


def test_bad_token_permutations_name_the_setting_and_the_fix() -> None:
    for bad in (-1, True, 1.5, 2**40):
        with pytest.raises(ValueError, match=r"permute_tokens.seed=.*integer in \[0, 2\*\*40\)"):
            TokenPermutation(seed=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"permute_tokens\.slots=0 must be a token count"):
        TokenPermutation(seed=0, slots=0)
    with pytest.raises(ValueError, match="raise slots to the tokenizer's max_length"):
        TokenPermutation(seed=0, slots=4)(batch(padded=False))
    grid = Tokens(torch.randn(1, 7, DIM), torch.ones(1, 7, dtype=torch.bool), TokenGrid(2, 3, prefix=1))
    with pytest.raises(ValueError, match=r"grid tokens .* permute their own cells"):
        TokenPermutation(seed=0, slots=6)(grid)


@pytest.mark.parametrize(("positions", "invariant"), [("none", True), ("sinusoidal", False)])
def test_a_task_permutes_what_its_backbone_sees(positions: str, invariant: bool) -> None:
    """`permute_tokens` acts between the embedder and the backbone: with no positions the pooled features
    are unchanged, with fixed sinusoids they change."""
    tokenizer = ImageTokenizer(patch_size=4, channels=1, image_size=12)
    plain = Classifier(tokenizer, num_outputs=3, backbone=encoder(positions)).eval()
    permuted = copy.deepcopy(plain)
    permuted.permute_tokens = TokenPermutation(seed=PERMUTATION_SEED)
    batch = tokenizer.encode_batch(torch.randint(0, 256, (2, 1, 12, 12), dtype=torch.uint8))
    same = torch.allclose(plain.features(batch), permuted.features(batch), atol=1e-6)
    assert same == invariant
    assert Classifier(tokenizer, 3, encoder("none"), permute_tokens=TokenPermutation(seed=1)).hparams[
        "permute_tokens"
    ] == TokenPermutation(seed=1), "saved with the checkpoint's hyperparameters"


# Level (b): raw elements ------------------------------------------------------------------------------


def test_image_pixels_move_by_one_fixed_bijection_in_training_and_evaluation() -> None:
    tokenizer = ImageTokenizer(patch_size=4, channels=3, image_size=8, permute_elements_seed=5)
    plain = ImageTokenizer(patch_size=4, channels=3, image_size=8)
    image = torch.randint(0, 256, (3, 8, 8), dtype=torch.uint8)
    out, ref = tokenizer(image)["pixels"], plain(image)["pixels"]
    assert not torch.equal(out, ref), "the pixels must move"
    assert torch.equal(out.flatten().sort().values, ref.flatten().sort().values), "a bijection: same values"
    perm = fixed_permutation(5, 64)
    assert torch.equal(out, ref.flatten(1)[:, perm].view(3, 8, 8)), "one permutation for every channel"
    assert torch.equal(tokenizer.train()(image)["pixels"], out), "no augmentation: train = eval"
    again = ImageTokenizer(patch_size=4, channels=3, image_size=8, permute_elements_seed=5).eval()
    assert torch.equal(again(image)["pixels"], out), "reproducible from the seed"
    other = ImageTokenizer(patch_size=4, channels=3, image_size=8, permute_elements_seed=6)
    assert not torch.equal(other(image)["pixels"], out)
    batched = tokenizer.eval().encode_batch(torch.stack([image, image]))["pixels"]
    assert torch.equal(batched[1], out), "the batched path permutes the same way"


def test_image_permutation_comes_after_augmentation() -> None:
    tokenizer = ImageTokenizer(patch_size=4, channels=1, permute_elements_seed=0, hflip=True)
    image = torch.arange(64, dtype=torch.uint8).view(1, 8, 8)
    torch.manual_seed(0)
    flips = {tuple(tokenizer.train()(image)["pixels"].flatten().tolist()) for _ in range(12)}
    plain = ImageTokenizer(patch_size=4, channels=1)(image)["pixels"]
    expected = {plain, plain.flip(-1)}
    assert flips == {tuple(permute_cells(p, 0).flatten().tolist()) for p in expected}


def test_image_permutation_round_trips_through_the_spec() -> None:
    tokenizer = ImageTokenizer(patch_size=4, channels=1, image_size=8, permute_elements_seed=9)
    spec = ImageTokenizerSpec.from_json(json.loads(json.dumps(tokenizer.to_spec().to_json())))
    assert spec.permute_elements_seed == 9
    rebuilt = ImageTokenizer.from_spec(spec)
    image = torch.randint(0, 256, (1, 8, 8), dtype=torch.uint8)
    assert torch.equal(rebuilt(image)["pixels"], tokenizer(image)["pixels"])
    assert ImageTokenizer(patch_size=4, channels=1, image_size=8).to_spec().permute_elements_seed is None


def wave(seconds: float) -> torch.Tensor:
    return torch.randn(round(16000 * seconds))


def audio(**options: object) -> AudioTokenizer:
    base: dict[str, object] = {"input_sample_rate": 16000, "n_mels": 16, "max_frames": 21, "mean": 0.0}
    return AudioTokenizer(**(base | options))  # type: ignore[arg-type]


def test_spectrogram_cells_move_by_one_fixed_bijection_with_an_honest_mask() -> None:
    tokenizer, plain = audio(permute_elements_seed=2, patch_size=(4, 8)), audio(patch_size=(4, 8))
    short, full = wave(0.1), wave(0.2)  # 11 and 21 frames
    out = tokenizer(short)
    ref = plain(short)["features"]  # (11, 16)
    assert out["features"].shape == (21, 16), "padded to max_frames before permuting"
    padded = torch.cat([ref, torch.zeros(10, 16)])
    perm = fixed_permutation(2, 21 * 16)
    assert torch.equal(out["features"], padded.flatten()[perm].view(21, 16))
    real = torch.cat([torch.ones(11, 16), torch.zeros(10, 16)]).bool().flatten()[perm].view(21, 16)
    assert torch.equal(out["frame_mask"], real.any(dim=-1)), "a frame is real iff it holds a real cell"
    _, tiny = tokenizer.permute_elements(torch.randn(1, 16))  # 1 real frame: 16 cells reach ≤ 16 frames
    assert 1 <= int(tiny.sum()) <= 16, "frames holding only padding stay masked"
    collated = tokenizer.collate([out, tokenizer(full)])
    assert torch.equal(collated["frame_mask"][0, :21], out["frame_mask"]) and bool(
        collated["frame_mask"][1, :21].all()
    )
    model = encoder("learned")
    embedder = tokenizer.embedder(DIM)
    tokens = embedder(collated)
    pooled = pool(model(tokens.x, tokens.mask, grid=tokens.grid), tokens.mask, "mean")
    assert bool(torch.isfinite(pooled).all()), "no NaN from permuted padding"
    batched = tokenizer.encode_batch([full, full])  # one STFT for the batch, then padded to patches
    torch.testing.assert_close(batched["features"][0, :21], tokenizer(full)["features"])
    assert torch.equal(batched["frame_mask"][0], collated["frame_mask"][1])


def test_audio_permutation_round_trips_through_the_spec_and_bad_seeds_are_named() -> None:
    tokenizer = audio(permute_elements_seed=4)
    spec = AudioTokenizerSpec.from_json(json.loads(json.dumps(tokenizer.to_spec().to_json())))
    assert spec.permute_elements_seed == 4
    clip = wave(0.2)
    assert torch.equal(AudioTokenizer.from_spec(spec)(clip)["features"], tokenizer(clip)["features"])
    with pytest.raises(
        ValueError, match=r"AudioTokenizer permute_elements_seed=-3 is not a permutation seed"
    ):
        audio(permute_elements_seed=-3)
    with pytest.raises(ValueError, match=r"ImageTokenizer permute_elements_seed='0' .* or null for none"):
        ImageTokenizer(permute_elements_seed="0")  # type: ignore[arg-type]


# The benchmark ----------------------------------------------------------------------------------------

BUDGET = Budget(learning_rates=(1e-3, 3e-3), seeds=(0, 1, 2), steps=3, batch_size=4, limit=8, quick=True)


def test_each_run_switches_on_only_its_own_permutation() -> None:
    task = PERMUTATION_TASKS["image"]
    args = {
        p: cli_args(
            ROOT,
            task,
            PermutationKey(modality="image", arm="grid_cnn", permutation=p, lr=1e-3, seed=1),
            BUDGET,
        )
        for p in ("none", "token", "element")
    }
    token, element = "--model.init_args.permute_tokens.seed", task.element_flag
    assert token not in args["none"] and element not in args["none"]
    assert (
        args["token"][args["token"].index(token) + 1] == str(PERMUTATION_SEED)
        and element not in args["token"]
    )
    assert (
        args["element"][args["element"].index(element) + 1] == str(PERMUTATION_SEED)
        and token not in args["element"]
    )
    backbone = args["none"][args["none"].index("--model.init_args.backbone") + 1]
    assert backbone.endswith("configs/backbone/patch_grid_cnn.yaml")
    keys = {(k.arm, k.permutation) for k in arms_of(task)}
    assert keys == {
        ("grid_cnn", "none"),
        ("grid_cnn", "token"),
        ("grid_cnn", "element"),
        ("small", "none"),
        ("small", "element"),
    }
    assert {(k.arm, k.permutation) for k in arms_of(PERMUTATION_TASKS["text"])} == {
        (a, p) for a in ("sequence_cnn", "sequence_lstm") for p in ("none", "token")
    }
    with pytest.raises(ValueError, match="invariant to token order by construction"):
        PermutationTask(name="x", config="c.yaml", token_arms=("small",))


def test_the_table_follows_validation_and_gives_t_intervals(tmp_path: Path) -> None:
    log = RunLog(tmp_path / "runs.jsonl", KEY_FIELDS)
    for permutation, accs in (("none", (0.80, 0.82, 0.84)), ("token", (0.40, 0.50, 0.45))):
        base = {"modality": "image", "arm": "grid_cnn", "permutation": permutation}
        # validation prefers 1e-3, test prefers 3e-3: the table must follow validation
        log.add(base | {"lr": 3e-3, "seed": 0, "val_acc": 0.1, "test_acc": 0.99})
        for seed, acc in enumerate(accs):
            log.add(base | {"lr": 1e-3, "seed": seed, "val_acc": 0.9, "test_acc": acc})
    records = summarise_permutation_bench(log, ["image"], BUDGET)
    rows = [(r.level, r.arm, r.permuted) for r in records]
    # level (b) has no permuted run yet: only the unpermuted row both levels share
    assert rows == [
        ("token", "small", True), ("token", "grid_cnn", False), ("token", "grid_cnn", True),
        ("element", "grid_cnn", False),
    ]  # fmt: skip
    transformer, plain, permuted, _ = records
    assert permuted.test_mean == pytest.approx(0.45) and permuted.best_lr == 1e-3
    assert transformer.test_mean is None and INVARIANCE_TEST in transformer.note
    assert INVARIANCE_TEST.split("::")[1] in globals(), "the note must cite a test that exists"
    half = 4.302653 * 0.02 / math.sqrt(3)  # t_{0.975, 2} · sd / √n
    assert plain.best_lr == 1e-3 and plain.test_mean == pytest.approx(0.82)
    assert plain.half_width == pytest.approx(half, rel=1e-5) and plain.seeds == 3
    table = permutation_table(records)
    assert "| image | a: token order | grid_cnn | no | 0.001 | 0.820 ± 0.050 | 3 |" in table
    assert "| image | a: token order | small | yes | — | not run | 0 |" in table
    change = "| image | a: token order | grid_cnn | 0.820 ± 0.050 | 0.450 ± 0.124 | -37.0 pts | no: a change"
    assert change in table
    assert "| image | a: token order | small | — | — | 0 by construction | — |" in table


@pytest.mark.slow
def test_smoke_sweep_runs_every_image_arm_and_resumes(cache_dir: Path, tmp_path: Path) -> None:
    script = load_script()
    args = ["--smoke", "--modalities", "image", "--out", str(tmp_path)]
    assert script.main(args) == 0
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert {(r["arm"], r["permutation"]) for r in runs} == {
        (k.arm, k.permutation) for k in arms_of(PERMUTATION_TASKS["image"])
    }
    by_arm = {(r["arm"], r["permutation"]): r for r in runs}
    assert by_arm["grid_cnn", "token"]["params"] == by_arm["grid_cnn", "none"]["params"]
    assert by_arm["small", "element"]["params"] != by_arm["grid_cnn", "element"]["params"]
    table = (tmp_path / "permutation.md").read_text()
    assert "| image | b: raw elements | small | yes |" in table and (tmp_path / "permutation.png").exists()
    assert script.main(args) == 0
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == len(runs), (
        "a finished sweep reruns nothing"
    )
