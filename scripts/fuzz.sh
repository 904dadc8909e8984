#!/usr/bin/env bash
# Runs every cargo-fuzz target for a fixed number of executions (default 200000 each; FUZZ_RUNS
# overrides, e.g. FUZZ_RUNS=5000 for the CI smoke). A crash stops the run and leaves its input in
# fuzz/artifacts/<target>/; commit such an input as a regression test next to the code it broke.
#
# cargo-fuzz needs nightly-only compiler flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
runs=${FUZZ_RUNS:-200000}
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --version 0.13.2
export RUSTC_BOOTSTRAP=1
for target in $(cargo fuzz list); do
  printf '\n== fuzz %s: %s runs\n' "$target" "$runs" >&2
  cargo fuzz run "$target" -- -runs="$runs" -max_len=8192 -print_final_stats=1 2>&1 | tail -n 3
done
