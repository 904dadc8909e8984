#!/usr/bin/env bash
# Runs every benchmark of the workspace; each prints its figures as ratios against a floor measured
# in the same run (see the README's benchmark table). Release build, so the first run compiles.
# `--bench '*'` runs the bench targets only (not the unit tests of every crate in bench mode).
set -euo pipefail
cd "$(dirname "$0")/.."
# The MCP round trip runs against a Python NDJSON host (benches/ndjson_host.py) when a Python is at
# hand, as the issue's check does; set ASP_BRIDGE_BENCH_PYTHON= (empty) to use the Rust fake host.
if [ -z "${ASP_BRIDGE_BENCH_PYTHON+set}" ] && command -v python3 >/dev/null; then
  export ASP_BRIDGE_BENCH_PYTHON=python3
fi
# The hygiene sweep side by side with pre-commit-hooks (benches/precommit.rs) runs the hooks from
# .tools/venv (scripts/test.sh installs them from scripts/tools/requirements.txt), or from
# ASP_BRIDGE_PRECOMMIT_HOOKS (a folder of their console scripts); without them it says so and skips.
# The linter runner against ruff run directly (benches/linters.rs) finds ruff on PATH, in .tools/venv/bin
# or beside ASP_BRIDGE_PYTHON; without it, it says so and skips.
printf 'machine: %s cores, %s\n' "$(nproc)" "$(uname -m)" >&2
cargo bench --workspace --bench '*' 2>&1 | grep -vE '^\s*(Compiling|Finished|Running|Downloaded|Downloading)\b'
