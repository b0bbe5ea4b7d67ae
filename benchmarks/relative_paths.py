"""Committed results name no machine's absolute paths: rewrite them relative to the repository.

    python -m benchmarks.relative_paths            # rewrite results/ in place
    python -m benchmarks.relative_paths --check    # list files that still hold one (exit 1)

A path inside a checkout (`…/configs/…`, `…/results/…`) keeps its part from the repository's top folder;
a run folder made elsewhere (`/tmp/x/imdb/version_0/config.yaml`) becomes `runs/imdb/version_0/…`, as
`tabrasa fit` names it by default; any other absolute path keeps its file name only, behind `<tmp>/`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ABSOLUTE = re.compile(r"(?<![\w.~-])/(?:tmp|work|root|home|var|mnt|Users)/[^\s\"',)\]}]*")
TOP_FOLDERS = ("configs", "results", "runs", "benchmarks", "scripts", "tabrasa", "tests", "docs")
RUN = re.compile(r"/([^/]+)/(version_\d+)(/.*)?$")


def relative(path: str) -> str:
    parts = path.split("/")
    for index, part in enumerate(parts):
        if part in TOP_FOLDERS and index > 1:
            return "/".join(parts[index:])
    run = RUN.search(path)
    if run:
        return f"runs/{run.group(1)}/{run.group(2)}{run.group(3) or ''}"
    return f"<tmp>/{parts[-1]}"


def rewrite(text: str) -> str:
    return ABSOLUTE.sub(lambda m: relative(m.group(0)), text)


def ignored(root: Path) -> set[Path]:
    """Files under results/ that git ignores (a teacher's local run folder, say): never committed, so not
    checked. Outside a git checkout nothing is ignored."""
    done = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "results"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return set()
    return {(root / name).resolve() for name in done.stdout.split("\0") if name}


def offenders(root: Path) -> list[Path]:
    skip = ignored(root)
    files = (
        p
        for p in (root / "results").rglob("*")
        if p.suffix in {".json", ".jsonl", ".md", ".csv", ".txt"} and p.resolve() not in skip
    )
    return sorted(p for p in files if ABSOLUTE.search(p.read_text(errors="ignore")))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true")
    p.add_argument("--root", type=Path, default=ROOT)
    args = p.parse_args(argv)
    found = offenders(args.root)
    if args.check:
        for path in found:
            print(f"absolute path in {path.relative_to(args.root)}; run python -m benchmarks.relative_paths")
        return 1 if found else 0
    for path in found:
        path.write_text(rewrite(path.read_text()))
        print(f"rewrote {path.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
