#!/usr/bin/env bash
# The optional pieces the tests use, on top of scripts/setup.sh: the `ray` and `postgres` extras (pip), and,
# as root with apt, PostgreSQL's server (the shared-store tests start one on loopback) and Chromium (the
# triage report is rendered in it) where they are missing. Tests whose piece is still missing skip and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! .venv/bin/python -c "import ray, psycopg" >/dev/null 2>&1 || [ pyproject.toml -nt .venv/.kope-test-extras ]; then
    echo "test-deps: installing the ray and postgres extras"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev,ray,postgres]"
    touch .venv/.kope-test-extras
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
