#!/usr/bin/env bash
# Builds what is distributed, for linux-x64: the `dist` binary (stripped, fat LTO, one codegen unit)
# linked for manylinux2014 (glibc 2.17) through `maturin --zig`, in the PyPI wheel `asp-bridge`, and the
# npm packages `asp-bridge` (the launcher) and `asp-bridge-linux-x64` (the binary) as tarballs. Prints
# the binary's size and the newest glibc symbol version it needs.
#
#   scripts/package.sh            # into target/package/ (ASP_BRIDGE_DIST overrides)
#
# Needs what scripts/test.sh installs (.tools/venv with maturin and ziglang from PyPI, Node.js and npm);
# cargo builds from its cache, so once the dependencies are fetched it runs offline.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${ASP_BRIDGE_DIST:-$root/target/package}
venv=$root/.tools/venv
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
step() { printf '\n== %s\n' "$*" >&2; }

if ! "$venv/bin/python" -c 'import ziglang' >/dev/null 2>&1 || [ ! -x "$venv/bin/maturin" ]; then
  step "python venv: maturin, ziglang"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r scripts/tools/requirements.txt
fi

step "maturin build --profile dist --zig --compatibility manylinux2014 (the first build takes several minutes)"
rm -rf "$out/wheels" "$out/npm"
mkdir -p "$out/wheels" "$out/npm"
# Its own target folder: the dist build never waits on, nor invalidates, the development builds.
PATH=$venv/bin:$PATH CARGO_TARGET_DIR=$out maturin build --locked --profile dist --zig \
  --compatibility manylinux2014 --target x86_64-unknown-linux-gnu -o "$out/wheels" >&2
binary=$out/x86_64-unknown-linux-gnu/dist/asp-bridge
wheel=$(ls "$out"/wheels/asp_bridge-"$version"-*.whl)

# The fuzzing entry points (each crate's `fuzzing` module, behind its `fuzzing` feature) are not in
# what ships: no symbol of theirs, and no panic location in one of their files (the dist binary is
# stripped, so the second is what a stripped binary still shows).
step "no fuzzing module in the binary"
if command -v nm >/dev/null 2>&1; then
  symbols=$(nm -C "$binary" 2>/dev/null || true) # none at all when stripped
  if grep -q '::fuzzing::' <<<"$symbols"; then
    echo "asp-bridge: package: the dist binary holds fuzzing symbols" >&2
    exit 1
  fi
else
  echo "asp-bridge: package: nm is missing: the symbol check is skipped" >&2
fi
if grep -q -a -E '(core-host|lsp-adapter|mcp-adapter|sarif-export)/src/fuzzing\.rs' "$binary"; then
  echo "asp-bridge: package: the dist binary holds code of a fuzzing module" >&2
  exit 1
fi

step "npm packages"
platform=$out/npm/asp-bridge-linux-x64
mkdir -p "$platform/bin"
cp "$binary" "$platform/bin/asp-bridge"
chmod 755 "$platform/bin/asp-bridge"
sed -e "s/@TARGET@/linux-x64/g" -e "s/@VERSION@/$version/g" -e "s/@OS@/linux/" -e "s/@CPU@/x64/" \
  -e 's/@LIBC@/"libc": ["glibc"],/' packaging/npm/platform/package.json.in >"$platform/package.json"
cp packaging/npm/asp-bridge/README.md "$platform/README.md"
cp -R packaging/npm/asp-bridge "$out/npm/asp-bridge"
for package in "$platform" "$out/npm/asp-bridge"; do
  (cd "$out/npm" && NPM_CONFIG_UPDATE_NOTIFIER=false npm pack --silent "$package" >/dev/null)
done

size=$(stat -c %s "$binary")
glibc=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9.]*' | sort -u -V | tail -n 1)
printf 'asp-bridge: package: binary %s bytes (%s MiB), needs %s at most\n' \
  "$size" "$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')" "${glibc:-no glibc symbol}"
printf 'asp-bridge: package: wheel %s\n' "$wheel"
printf 'asp-bridge: package: npm %s\n' "$out"/npm/*.tgz
