#!/usr/bin/env bash
# Set up (scripts/setup.sh, scripts/test-deps.sh), then lint, type-check and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/test-deps.sh
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
