#!/usr/bin/env bash
# Create .venv in the repository root with kope (editable), its test tools, PyTorch, Triton 3.7 and numpy.
# The optional pieces only the tests need (Ray, psycopg, PostgreSQL's server, Chromium) are installed by
# scripts/test-deps.sh, which scripts/test.sh runs.
# On a machine without an NVIDIA driver PyTorch is pinned to 2.13.0, which this workplace holds as a
# CPU build (elsewhere, point pip at a CPU wheel index first: KOPE_TORCH_SPEC="torch==2.13.0 --index-url
# https://download.pytorch.org/whl/cpu"). Re-running it is cheap: what is installed stays.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$python" -m venv .venv
fi
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
if ! .venv/bin/python -m pip show --quiet torch >/dev/null 2>&1; then
    if command -v nvidia-smi >/dev/null 2>&1; then
        spec="${KOPE_TORCH_SPEC:-torch}"
    else
        spec="${KOPE_TORCH_SPEC:-torch==2.13.0}"
    fi
    echo "setup: installing $spec"
    # shellcheck disable=SC2086
    "${pip[@]}" $spec
fi
if ! .venv/bin/python -c "import kope" >/dev/null 2>&1 || [ pyproject.toml -nt .venv/.kope-installed ]; then
    echo "setup: installing kope and its dependencies"
    "${pip[@]}" -e ".[dev]"
    touch .venv/.kope-installed
fi

