#!/usr/bin/env bash
# make deb: build the Debian packages (debian/: librtl0, librtl-dev,
# rtl-tools) with debhelper from a copy of the tree's files, so that the
# checkout gains nothing but OUT; then check them with lintian, whose
# errors fail the build. The packages land in OUT (build-deb by default).
# Usage: scripts/deb.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-build-deb}")

version=$(sed -n "s/^  version : '\(.*\)',$/\1/p" meson.build)
changelog=$(dpkg-parsechangelog -S Version)
if [[ $version != "$changelog" ]]; then
  echo "deb: meson.build says $version, debian/changelog $changelog: add a changelog entry (dch -v $version)" >&2
  exit 1
fi

# The files of the tree as git sees them (tracked, and new ones not
# ignored): a build folder or a report lying around does not go in.
rm -rf "$out"
src=$out/src/rtl-$version
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
    xargs -0 cp --parents -a -t "$src"
else
  tar --exclude='./build*' --exclude=./bench/out -cf - . | tar -xf - -C "$src"
fi

echo "deb: building rtl $version in $src" >&2
(cd "$src" && dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1) || {
  tail -n 30 "$out/build.log" >&2
  echo "deb: dpkg-buildpackage failed (whole log: $out/build.log)" >&2
  exit 1
}
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out/"
rm -rf "$out/src"

# Errors fail; warnings and the rest are printed for whoever reads on.
lintian --no-tag-display-limit "$out"/*.deb >"$out/lintian.txt" 2>&1 || true
cat "$out/lintian.txt" >&2
if grep -q '^E: ' "$out/lintian.txt"; then
  echo "deb: lintian found errors (above)" >&2
  exit 1
fi
ls -1 "$out"/*.deb
