#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs what the tests need on a fresh Debian
# machine, then runs rustfmt, clippy and every test of the workspace.
#
# Installs: Debian `neovim`, `git`, `curl` and `xz-utils` when missing, Node.js 20+ when missing (the
# opcore provider tests; official tarball into .tools/node), a Python venv with the official
# MCP client (`mcp`), and the npm packages `@microsoft/sarif-multitool` and
# `@modelcontextprotocol/inspector` into .tools/ (ignored by git). Tests find them through the
# ASP_BRIDGE_* variables exported below; under CI=true a test whose tool is missing fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=$root/.tools
mkdir -p "$tools"

step() { printf '\n== %s\n' "$*" >&2; }

# curl and xz fetch and unpack Node.js below when it is needed (and xz the opcore bundle in the tests).
missing=""
for pair in nvim:neovim git:git curl:curl xz:xz-utils; do
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
# tools below. Debian 12's nodejs is 18, so when the one on PATH is missing or older, the official
# linux tarball of the latest 20.x goes into .tools/node (checked against nodejs.org's SHASUMS256.txt).
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
node_bin=$(command -v node || true)
if [ -z "$node_bin" ] || [ "$(node_major "$node_bin")" -lt 20 ]; then
  node_bin=$tools/node/bin/node
  if [ ! -x "$node_bin" ] || [ "$(node_major "$node_bin")" -lt 20 ]; then
    step "Node.js 20 (official tarball into .tools/node)"
    case "$(uname -m)" in
      x86_64) arch=x64 ;;
      aarch64 | arm64) arch=arm64 ;;
      *) echo "no Node.js tarball for $(uname -m): install Node.js 20 or later" >&2; exit 1 ;;
    esac
    dist=https://nodejs.org/dist/latest-v20.x
    sums=$(curl -fsSL "$dist/SHASUMS256.txt")
    tarball=$(printf '%s\n' "$sums" | awk -v a="linux-$arch.tar.xz" '$2 ~ a"$" {print $2; exit}')
    [ -n "$tarball" ] || { echo "no linux-$arch tarball listed in $dist/SHASUMS256.txt" >&2; exit 1; }
    curl -fsSL -o "$tools/$tarball" "$dist/$tarball"
    (cd "$tools" && printf '%s\n' "$sums" | grep " $tarball\$" | sha256sum -c --quiet -)
    rm -rf "$tools/node" && mkdir -p "$tools/node"
    tar -xJf "$tools/$tarball" -C "$tools/node" --strip-components=1
    rm -f "$tools/$tarball"
  fi
  export PATH=$tools/node/bin:$PATH
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
step "cargo test"
cargo test --workspace
