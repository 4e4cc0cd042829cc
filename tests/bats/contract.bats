#!/usr/bin/env bats
# The API contract as a user meets it: a program written from DESIGN.md alone
# builds against the header and the library, in the tree and once installed,
# and behaves as the paper's Tables 2 and 3 say.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
  top=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  build=${RTL_BUILD:-$top/build}
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
