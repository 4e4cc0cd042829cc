#!/bin/sh
# Make the preload's private jemalloc from Debian's libjemalloc_pic.a: every
# public name (malloc, free, mallocx, mallctl, malloc_conf ...) renamed
# rtl_je_*, the C++ operators left out, and its constructor dropped so that
# it starts only when the preload selects something. Its call to
# pthread_atfork is renamed too: the preload runs jemalloc's fork handlers
# from its own (preload/place/arena.c), in an order that does not depend on
# when jemalloc started. Linked into librtlpreload.so with everything
# local, it interposes nothing.
# Usage: jemalloc-private.sh IN.a OUT.a; BINUTILS_PREFIX names the
# binutils of the machine built for (aarch64-linux-gnu- when cross-building).
set -eu
p=${BINUTILS_PREFIX:-}
in=$1
out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp "$in" "$tmp/lib.a"
"${p}ar" d "$tmp/lib.a" jemalloc_cpp.pic.o
"${p}nm" -g --defined-only "$tmp/lib.a" 2>/dev/null |
  awk 'NF == 3 && $3 !~ /^(je_|_Z|DW\.)/ { print $3, "rtl_je_" $3 }' |
  sort -u >"$tmp/names"
grep -q '^mallocx rtl_je_mallocx$' "$tmp/names"
# A jemalloc that registers its fork handlers some other way would run them
# out of the preload's order: refuse to build with it.
"${p}nm" -u "$tmp/lib.a" | grep -q ' pthread_atfork$' || {
  echo "jemalloc-private.sh: $in does not call pthread_atfork" >&2
  exit 1
}
echo "pthread_atfork rtl_je_pthread_atfork" >>"$tmp/names"
"${p}objcopy" --redefine-syms="$tmp/names" "$tmp/lib.a" "$tmp/renamed.a"
(
  cd "$tmp"
  "${p}ar" x renamed.a jemalloc.pic.o
  "${p}objcopy" --remove-section=.init_array jemalloc.pic.o
  "${p}ar" r renamed.a jemalloc.pic.o
)
mv "$tmp/renamed.a" "$out"
