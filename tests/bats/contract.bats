#!/usr/bin/env bats
# The API contract as a user meets it: a program written from DESIGN.md alone
# builds against the header and the library, in the tree and once installed,
# and behaves as the paper's Tables 2 and 3 say.

load helpers

setup() {
  tmp=$(mktemp -d)
  # make check-sanitize builds rtl instrumented: link programs the same way.
  san=${RTL_SANITIZE_CFLAGS:-}
}

teardown() {
  rm -rf "$tmp"
}

expected_output() {
  assert_line --index 0 "read x[0]=0 traps=0"
  assert_line --index 1 "write x[1] traps=1"
  assert_line --index 2 "write x[2] traps=1"
  assert_line --index 3 "read after PROT_NONE sum=3 traps=2"
}

@test "builds with -Iinclude -Lbuild -lrtl and follows Tables 2 and 3" {
  cc $san -o "$tmp/prog" "$top/tests/contract/table23.c" -I"$top/include" \
    -L"$build/core" -lrtl
  run env LD_LIBRARY_PATH="$build/core" "$tmp/prog"
  assert_success
  expected_output
}

@test "installs with meson, builds with pkg-config rtl" {
  DESTDIR="$tmp/root" meson install -C "$build" --quiet >/dev/null
  pc=$(dirname "$(find "$tmp/root" -name rtl.pc | head -n 1)")
  [ -n "$pc" ]
  [ -f "$(find "$tmp/root" -path '*include/rtl/region.h' | head -n 1)" ]
  flags=$(PKG_CONFIG_PATH="$pc" PKG_CONFIG_SYSROOT_DIR="$tmp/root" \
    pkg-config --cflags --libs rtl)
  cc $san -o "$tmp/prog" "$top/tests/contract/table23.c" $flags
  lib=$(dirname "$(find "$tmp/root" -name 'librtl.so' | head -n 1)")
  run env LD_LIBRARY_PATH="$lib" "$tmp/prog"
  assert_success
  expected_output
}

@test "an unhandled trap ends the program with SIGSEGV and says why" {
  cat >"$tmp/crash.c" <<'C'
#include <rtl/region.h>
int main(void)
{
	char *x = region_alloc(64, &x);
	region_protect(x, PROT_READ);
	*(volatile char *)(x + 3) = 1;
	return 0;
}
C
  cc $san -g -o "$tmp/crash" "$tmp/crash.c" -I"$top/include" -L"$build/core" -lrtl
  run env LD_LIBRARY_PATH="$build/core" "$tmp/crash"
  assert_equal "$status" 139
  assert_output --partial "rtl: unhandled region trap (no handler)"
  assert_output --partial "write at 0x"
  assert_output --partial "backtrace:"
  assert_output --partial "main+"
}

# Every whole-program example of docs/guide.md (a block that starts with
# "/* example: NAME */") builds against region.h and librtl and runs clean.
@test "the guide's examples compile and run" {
  python3 - "$top/docs/guide.md" "$tmp" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
blocks = [b for b in re.findall(r"```c\n(.*?)```", text, re.S)
          if b.startswith("/* example:")]
assert len(blocks) >= 4, len(blocks)
for i, b in enumerate(blocks):
    open(f"{sys.argv[2]}/ex{i}.c", "w").write(b)
PY
  n=0
  for src in "$tmp"/ex*.c; do
    cc $san -Wall -Wextra -Werror -o "${src%.c}" "$src" -I"$top/include" \
      -L"$build/core" -lrtl
    run env LD_LIBRARY_PATH="$build/core" "${src%.c}"
    assert_success
    n=$((n + 1))
  done
  [ "$n" -ge 4 ]
}

# librtl.so's exported symbols: the public API under RTL_0.1, RTL_0.2 and
# RTL_0.3, rtl's own internal seam under RTL_PRIVATE.
@test "librtl exports region_* under RTL_0.1/RTL_0.2/RTL_0.3 and rtl_* under RTL_PRIVATE" {
  run bash -c "nm -D --defined-only '$build/core/librtl.so' | awk '{print \$3}'"
  assert_success
  assert_line "region_alloc@@RTL_0.1"
  assert_line "region_find@@RTL_0.2"
  assert_line "region_dirty_backend@@RTL_0.3"
  assert_line "region_alloc_tagged@@RTL_0.4"
  assert_line "rtl_reserve@@RTL_PRIVATE"
  refute_line --regexp '^region_.*@@RTL_PRIVATE$'
  refute_line --regexp '^rtl_.*@@RTL_0\.[1234]$'
}

# -lrtl alone replaces no libc function: every name librtl.so defines is
# rtl's own. The wrappers are librtl-interpose's, for programs that opt in.
@test "nm -D librtl.so shows no libc function; librtl-interpose has the wrappers" {
  run bash -c "nm -D --defined-only '$build/core/librtl.so' | awk '{print \$3}' | grep -Ev '^(region_|rtl_|RTL_)'"
  assert_failure # grep found nothing
  assert_output ""
  run bash -c "nm -D --defined-only '$build/interpose/librtl-interpose.so' | awk '{print \$3}'"
  assert_line "read"
  assert_line "__read_chk"
  assert_line "fwrite"
}

@test "installs librtl-interpose with pkg-config rtl-interpose; read on a region is resolved" {
  DESTDIR="$tmp/root" meson install -C "$build" --quiet >/dev/null
  pc=$(dirname "$(find "$tmp/root" -name rtl-interpose.pc | head -n 1)")
  [ -n "$pc" ]
  cat >"$tmp/io.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <rtl/region.h>
static int calls;
static void grant(rtl_trap_t *t) { calls++; region_protect(t->addr, PROT_READ | PROT_WRITE); }
int main(void)
{
	char *x = region_alloc(64, &x);
	int fd = open("/dev/zero", O_RDONLY);
	region_handler(x, grant);
	region_protect(x, PROT_READ);
	/* Without the wrapper the kernel would fail with EFAULT. */
	ssize_t n = read(fd, x, 64);
	printf("%zd %d\n", n, calls);
	return 0;
}
C
  flags=$(PKG_CONFIG_PATH="$pc" PKG_CONFIG_SYSROOT_DIR="$tmp/root" \
    pkg-config --cflags --libs rtl-interpose)
  cc $san -o "$tmp/io" "$tmp/io.c" $flags
  lib=$(dirname "$(find "$tmp/root" -name 'librtl.so' | head -n 1)")
  run env LD_LIBRARY_PATH="$lib" "$tmp/io"
  assert_success
  assert_output "64 1"
  # The same program with -lrtl alone: the kernel refuses the read-only view.
  cc $san -o "$tmp/io-plain" "$tmp/io.c" -I"$top/include" -L"$build/core" -lrtl
  run env LD_LIBRARY_PATH="$build/core" "$tmp/io-plain"
  assert_success
  assert_output "-1 0"
}

# Programs outside the core's libraries use the public API only: no file in
# dsm/, bench/, examples/ or tools/ includes a header of core/, decoder/,
# interpose/ or preload/ (docs/internals.md, "Libraries").
@test "dsm, bench, examples and tools include no internal header" {
  cd "$top"
  internal=$(find core decoder interpose preload -name '*.h' -printf '%f\n' | sort -u)
  run bash -c '
    for f in $(git ls-files "dsm/*" "bench/*" "examples/*" "tools/*" | grep -E "\.(c|h|cpp)$"); do
      dir=$(dirname "$f")
      grep -oE "^#include [<\"][^>\"]+[>\"]" "$f" | sed -E "s/^#include [<\"]//; s/[>\"]$//" |
        while read -r h; do
          [[ -e $dir/$h || $h == rtl/* ]] && continue # its own, or public
          if grep -qx "$h" <<<"$1"; then echo "$f: $h"; fi
        done
    done' _ "$internal"
  assert_success
  assert_output ""
}
