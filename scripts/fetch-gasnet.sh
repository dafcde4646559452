#!/usr/bin/env bash
# Puts the GASNet-EX 2021.3.0 source (inside the crates.io package gex-sys
# 0.1.0) into cargo's registry cache, where gasnet-sys's build script finds it.
# Needs crates.io; does nothing when the source is already there.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cargo_home=${CARGO_HOME:-$HOME/.cargo}
if compgen -G "$cargo_home/registry/src/*/gex-sys-0.1.0/gasnet/gasnetex.h" >/dev/null; then
  exit 0
fi
echo "fetching the GASNet-EX 2021.3.0 source (crate gex-sys 0.1.0) into $cargo_home/registry" >&2
cargo fetch --manifest-path "$here/gasnet-src/Cargo.toml"
if ! compgen -G "$cargo_home/registry/src/*/gex-sys-0.1.0/gasnet/gasnetex.h" >/dev/null; then
  echo "error: cargo fetch did not unpack gex-sys 0.1.0 into $cargo_home/registry/src" >&2
  exit 1
fi
