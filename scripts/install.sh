#!/usr/bin/env bash
# make install: install the build under PREFIX without configuring meson
# for it. The installed tree is relocatable (RUNPATH $ORIGIN, each part
# found relative to the others: docs/install.md), so it is staged with
# meson's own prefix and copied to PREFIX. DESTDIR stages the result too.
# Usage: scripts/install.sh BUILD PREFIX
set -euo pipefail

build=${1:?usage: scripts/install.sh BUILD PREFIX}
prefix=${2:?usage: scripts/install.sh BUILD PREFIX}
[[ $prefix == /* ]] || { echo "install: PREFIX must be absolute: $prefix" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C "$build" --quiet --destdir "$stage" >/dev/null
configured=$(meson introspect "$build" --buildoptions |
  python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
dest=${DESTDIR:-}$prefix
mkdir -p "$dest"
cp -a "$stage$configured/." "$dest/"
echo "rtl: installed under $dest (try: $dest/bin/rtlctl run -- /bin/true)"
