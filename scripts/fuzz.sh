#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/, outside the workspace) for a fixed number of executions:
# FUZZ_RUNS each, default 200000; `FUZZ_RUNS=2000 scripts/fuzz.sh` is the CI smoke. FUZZ_TARGETS
# (space-separated) runs only those targets. Prints one line per target: executions run and "no
# crash". A crash stops the script (exit 1) and leaves its input in fuzz/artifacts/<target>/; commit
# such an input as a regression test next to the code it broke.
#
# The seed corpus is made here from the ASP fixtures (tests/fixtures/asp/**) and the inputs that once
# crashed a target (tests/fixtures/fuzz/<target>/) into fuzz/corpus/<target>/ (gitignored; what
# libFuzzer adds there is kept between runs). Targets are built with debug assertions and overflow
# checks, and mutate with fuzz/dict/asp.dict. cargo-fuzz needs nightly-only compiler flags;
# RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"
runs=${FUZZ_RUNS:-200000}
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --version 0.13.2
export RUSTC_BOOTSTRAP=1

# One line of JSON: pretty-printed fixtures hold no newline inside a string, and squeezed spaces
# keep them under libFuzzer's max_len.
one_line() { tr -d '\r\n' <"$1" | tr -s ' '; }

# A document text for the answers, long enough for the fixtures' ranges: multi-byte characters, a
# tab, a BiDi control and every line ending.
text=""
for i in $(seq 0 39); do
  text+="let l$i = \"😀 naïve 漢字\";"$'\t'"// x"$'\xe2\x80\xae' # U+202E, whatever the locale
  case $((i % 3)) in 0) text+=$'\n' ;; 1) text+=$'\r\n' ;; 2) text+=$'\r' ;; esac
done

seed() {
  local dir=corpus/$1 fixture name
  mkdir -p "$dir"
  while IFS= read -r fixture; do
    name=$(basename "${fixture%.json}")
    name="seed-$(basename "$(dirname "$fixture")")-$name"
    case $1 in
      framing | host_client) { one_line "$fixture"; printf '\n'; } >"$dir/$name" ;;
      lsp_frames)
        local body
        body=$(one_line "$fixture")
        printf 'Content-Length: %d\r\n\r\n%s' "$(printf '%s' "$body" | wc -c)" "$body" >"$dir/$name"
        ;;
      provider_answer) # the flags byte first: as recorded, and with a fresh validAsOf
        { printf '\0'; one_line "$fixture"; } >"$dir/$name"
        { printf '\4'; one_line "$fixture"; } >"$dir/$name-fresh"
        ;;
      changeset_intake) # the flags byte first: the host's baseline and true blob ids
        { printf '\3'; one_line "$fixture"; } >"$dir/$name"
        ;;
      *)
        one_line "$fixture" >"$dir/$name"
        { one_line "$fixture"; printf '\0%s' "$text"; } >"$dir/$name-text"
        ;;
    esac
  done < <(find "$root/tests/fixtures/asp" -name '*.json' | sort)
  # Inputs that once crashed this target (each also a regression test next to the code it broke).
  if [ -d "$root/tests/fixtures/fuzz/$1" ]; then
    cp "$root/tests/fixtures/fuzz/$1"/* "$dir/"
  fi
  case $1 in
    host_client) # replies to the three pending requests (ids 1 to 3), then junk
      for id in 1 2 3; do
        one_line "$root/tests/fixtures/asp/outer/status.response.json" |
          sed -E "s/^\{ ?\"jsonrpc\": \"2.0\", \"id\": [0-9]+/{\"jsonrpc\": \"2.0\", \"id\": $id/"
        printf '\n'
      done >"$dir/seed-three-replies"
      ;;
    mcp_frames) # a session: opening, a call, the same id again, its cancellation, the id once more
      local call='{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"asp_status","arguments":{}}}'
      { printf '\xef\xbb\xbf'; printf '%s\r\n' \
        '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$call" "$call" \
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}' "$call" \
        '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"asp_status","arguments":[]}}' \
        'not json'; } >"$dir/seed-session"
      ;;
    provider_answer) # opcore's recorded answers through the asp/0.1 mapping, fresh, at both call
      # sites; and a well-formed asp/1.0 Assessment with an error finding and a fix (free-form args), fresh
      for fixture in "$root"/tests/fixtures/opcore/evaluate.*.json; do
        name=$(basename "${fixture%.json}")
        { printf '\6'; one_line "$fixture"; } >"$dir/seed-opcore-$name"
        { printf '\7'; one_line "$fixture"; } >"$dir/seed-opcore-$name-gate"
      done
      local assessment='{"status":"complete","diagnostics":[{"code":"f/x","severity":"error","source":"f","message":"m","location":{"path":"a.txt","range":{"start":{"line":0,"char":0},"end":{"line":0,"char":4}}},"fingerprint":"f1","fix":{"editRef":"f/fix","args":{"cmd":"x"}}}],"coverage":{"requested":{"scope":"changeset","diagnosticSources":["f"],"rules":[],"comparison":"all"},"covered":{"scope":"changeset","diagnosticSources":["f"],"rules":[],"comparison":"all"},"degraded":[],"unsupported":[],"exhaustive":true,"truncated":false},"provider":{"id":"f","version":"1","configDigest":"sha256:0","capabilityVersion":"check/1.0"},"timing":{"elapsedMs":1},"cache":{"status":"disabled"}}'
      printf '\4%s' "$assessment" >"$dir/seed-assessment"
      # the same with a host-owned field where the schema lets one through: it must be refused
      printf '\4%s' "${assessment/\"cmd\"/\"shellCommand\"}" >"$dir/seed-assessment-host-owned"
      ;;
    changeset_intake) # every file of the target's repository changed, then a rename and a delete
      local change='{"kind":"modify","before":"","after":""}'
      local changes="" path
      for path in a.txt dir/b.json leak dirlink/secret fifo dir/fifo; do
        changes+="${changes:+,}${change/\{/\{\"path\":\"$path\",}"
      done
      printf '\3{"baseline":{"rev":""},"changes":[%s]}' "$changes" >"$dir/seed-every-file"
      printf '\3%s' '{"baseline":{"rev":""},"changes":[{"path":"dir/b.json","kind":"rename","from":"a.txt","before":"","after":""},{"path":"leak","kind":"delete","before":""}]}' >"$dir/seed-rename-delete"
      ;;
    lsp_frames)
      local init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
      printf 'Content-Length: %d\r\n\r\n%s' "${#init}" "$init" >"$dir/seed-initialize"
      ;;
  esac
}

targets=${FUZZ_TARGETS:-$(cargo fuzz list)}
cargo fuzz build --debug-assertions >&2 # every target, in one cargo run
for target in $targets; do
  seed "$target"
  log=$(mktemp)
  start=$SECONDS
  # -timeout: an input that takes over 30 s (a read that blocks, a loop) is a crash too.
  if ! cargo fuzz run --debug-assertions "$target" -- -runs="$runs" -max_len=8192 -timeout=30 \
    -dict="$root/fuzz/dict/asp.dict" -print_final_stats=1 >"$log" 2>&1; then
    grep -E -A3 'panicked at|ERROR: libFuzzer|==ERROR|SUMMARY:' "$log" | head -n 30 >&2 || true
    input=$(grep -o 'artifacts/[^ ]*' "$log" | tail -n 1)
    printf 'fuzz %s: CRASH, input in fuzz/%s\n' "$target" "${input:-artifacts/$target/}"
    rm -f "$log"
    exit 1
  fi
  done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  printf 'fuzz %-16s %9s executions in %4ss: no crash\n' "$target" "${done_runs:-?}" \
    "$((SECONDS - start))"
  rm -f "$log"
done
