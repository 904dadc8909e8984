#!/usr/bin/env bash
# Runs every benchmark of the workspace; each prints its figures as ratios against a floor measured
# in the same run (see the README's benchmark table). Release build, so the first run compiles.
# `--bench '*'` runs the bench targets only (not the unit tests of every crate in bench mode).
set -euo pipefail
cd "$(dirname "$0")/.."
printf 'machine: %s cores, %s\n' "$(nproc)" "$(uname -m)" >&2
cargo bench --workspace --bench '*' 2>&1 | grep -vE '^\s*(Compiling|Finished|Running|Downloaded|Downloading)\b'
