#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs what the tests need on a fresh Debian
# machine, then runs rustfmt, clippy and every test of the workspace.
#
# Installs: Debian `neovim` and `git` (the editor end-to-end test), a Python venv with the official
# MCP client (`mcp`), and the npm packages `@microsoft/sarif-multitool` and
# `@modelcontextprotocol/inspector` into .tools/ (ignored by git). Tests find them through the
# ASP_BRIDGE_* variables exported below; under CI=true a test whose tool is missing fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=$root/.tools
mkdir -p "$tools"

step() { printf '\n== %s\n' "$*" >&2; }

if ! command -v nvim >/dev/null 2>&1 || ! command -v git >/dev/null 2>&1; then
  step "apt: neovim git"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq neovim git >/dev/null
fi

if ! "$tools/venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
  step "python venv: mcp client"
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install -q --disable-pip-version-check -r scripts/tools/requirements.txt
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
step "cargo test"
cargo test --workspace
