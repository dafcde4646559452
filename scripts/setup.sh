#!/usr/bin/env bash
# Makes a fresh Debian/Ubuntu machine ready to build and run every variant:
# the system packages GASNet-EX and bindgen need, and the GASNet-EX source.
# As root it installs what is missing; otherwise it names the command to run.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# autoconf, automake: GASNet's ./Bootstrap; libclang-dev: bindgen;
# libibverbs-dev: ibv-conduit; openmpi: mpi-conduit and ibv's MPI spawner.
# fonts-dejavu-core: the font of the reproduction report's plots.
packages=(autoconf automake make gcc g++ libclang-dev libibverbs-dev libopenmpi-dev openmpi-bin fonts-dejavu-core)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: error: missing system packages: ${missing[*]}" >&2
    echo "setup: install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
"$here/fetch-gasnet.sh"
