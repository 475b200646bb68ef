#!/usr/bin/env bash
# Create .venv in the repository root with kope (editable), its test tools, PyTorch, Triton 3.7 and numpy,
# and the optional pieces the tests use: Ray and psycopg (extras), and, as root, PostgreSQL's server and
# Chromium from the distribution (apt) where they are missing. Tests whose piece is still missing skip
# and say why.
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
    "${pip[@]}" -e ".[dev,ray,postgres]"
    touch .venv/.kope-installed
fi

# PostgreSQL's server (the shared-store tests start one) and a headless browser (the triage report's test).
need=()
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    need+=(postgresql)
fi
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    need+=(chromium)
fi
if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing ${need[*]} (apt)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
            || { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; } \
            || echo "setup: could not install ${need[*]}; the tests that need them will skip"
    else
        echo "setup: ${need[*]} missing (not root, or no apt-get); the tests that need them will skip"
    fi
fi
