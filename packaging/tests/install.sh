#!/usr/bin/env bash
# The install tests of what scripts/package.sh built: the wheel into a fresh venv and through
# `uvx --from WHEEL`, the npm tarballs installed offline into a scratch project and run as
# `npx asp-bridge`; each drives `asp-bridge mcp` with the official Python MCP SDK (list the tools,
# call asp_status) on a fresh git repository, with nothing else installed (the embedded host).
#
#   packaging/tests/install.sh [DIST]     # DIST: what package.sh built (default target/package)
#
# Ends with `N passed, N failed` on a line of its own; exits non-zero when any failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dist=${1:-$root/target/package}
python=$root/.tools/venv/bin/python
uv=$root/.tools/venv/bin/uv
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
wheel=$(ls "$dist"/wheels/asp_bridge-"$version"-*.whl)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# A fresh repository and an empty home: no configuration, no `asp` on PATH.
repo=$scratch/repo
mkdir -p "$repo" "$scratch/home"
git -C "$repo" init -q
printf 'hello\n' >"$repo/README.txt"
git -C "$repo" add -A
git -C "$repo" -c user.name=t -c user.email=t@example.invalid -c commit.gpgsign=false commit -qm start
export HOME=$scratch/home XDG_CONFIG_HOME=$scratch/home
unset ASP_BRIDGE_HOST_COMMAND ASP_BRIDGE_CONFIG
clean_path=/usr/local/bin:/usr/bin:/bin

passed=0
failed=0
check() {
  local name=$1
  shift
  if out=$("$@" 2>"$scratch/stderr"); then
    printf 'ok   %s: %s\n' "$name" "$out"
    passed=$((passed + 1))
  else
    printf 'FAIL %s\n' "$name"
    sed 's/^/     /' "$scratch/stderr" | tail -n 20
    failed=$((failed + 1))
  fi
}
drive() { "$python" packaging/tests/installed.py --repo "$repo" -- "$@"; }

# pip: a fresh venv, the wheel only, no index.
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" install -q --disable-pip-version-check --no-index "$wheel" >&2
check "pip install of the wheel: --version" "$scratch/venv/bin/asp-bridge" --version
check "pip install of the wheel: mcp through the Python SDK" \
  env PATH="$clean_path" "$python" packaging/tests/installed.py --repo "$repo" -- "$scratch/venv/bin/asp-bridge" mcp --repo "$repo"

# uvx: the wheel as the tool, offline, in a cache of its own.
export UV_CACHE_DIR=$scratch/uv-cache UV_TOOL_DIR=$scratch/uv-tools
check "uvx --from WHEEL: mcp through the Python SDK" \
  drive "$uv" tool run --offline --from "$wheel" asp-bridge mcp --repo "$repo"

# npm: the two tarballs, offline, into a scratch project; `npx asp-bridge` runs the launcher.
project=$scratch/project
mkdir -p "$project"
(cd "$project" && printf '{"name": "scratch", "private": true}\n' >package.json &&
  NPM_CONFIG_UPDATE_NOTIFIER=false npm install --offline --no-audit --no-fund --loglevel=error \
    "$dist/npm/asp-bridge-linux-x64-$version.tgz" "$dist/npm/asp-bridge-$version.tgz" >&2)
launcher=$project/node_modules/.bin/asp-bridge
check "npm install of the tarballs: no install script ran" \
  sh -c "! grep -q '\"scripts\"' '$project/node_modules/asp-bridge/package.json' '$project/node_modules/asp-bridge-linux-x64/package.json' && echo none"
check "npx asp-bridge --version" sh -c "cd '$project' && npx --offline asp-bridge --version"
check "npx asp-bridge mcp through the Python SDK" \
  "$python" packaging/tests/installed.py --repo "$repo" --cwd "$project" -- npx --offline asp-bridge mcp --repo "$repo"
[ -x "$launcher" ] || { echo "FAIL npm did not link the launcher"; failed=$((failed + 1)); }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
