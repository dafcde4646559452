#!/usr/bin/env bash
# Makes a fresh Debian/Ubuntu machine ready to build and run every variant:
# `cargo uat setup` of this checkout (the system packages GASNet-EX and
# bindgen need, as root; otherwise it names the apt-get line; and the
# GASNet-EX source into cargo's registry cache).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$("$here/launcher.sh")" uat setup
