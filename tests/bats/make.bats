#!/usr/bin/env bats
# The Makefile's targets install what they need and no more
# (scripts/deps.sh GROUP...): building needs neither MPI nor the test tools.

bats_require_minimum_version 1.5.0
load helpers

@test "deps.sh: the build group has the compilers and libraries, not MPI or bats" {
  run "$top/scripts/deps.sh" --list build
  assert_success
  assert_line meson
  assert_line libcapstone-dev
  refute_line --regexp 'mpi|^bats|^clang$'
  run "$top/scripts/deps.sh" --list test
  assert_line bats
  refute_line --partial mpi
  run "$top/scripts/deps.sh" --list mpi
  assert_line libopenmpi-dev
  # No group: every group (CI, make deps), each package once.
  run "$top/scripts/deps.sh" --list
  for p in meson bats libopenmpi-dev clang clang-format debhelper lintian; do
    assert_line "$p"
  done
  assert_equal "$(sort <<<"$output" | uniq -d)" ""
  run "$top/scripts/deps.sh" --list nope
  assert_equal "$status" 2
  assert_output "deps.sh: no group 'nope' (groups: build format test mpi clang deb)"
}

@test "make: build and demo install the build group only; test adds the tests', MPI and deb's" {
  run make -s -n -C "$top" build BUILD=b
  assert_line "scripts/deps.sh build"
  refute_line --regexp 'deps.sh.*(mpi|test)'
  run make -s -n -C "$top" demo BUILD=b
  refute_line --regexp 'deps.sh.*(mpi|test)'
  run make -s -n -C "$top" test BUILD=b
  assert_line "scripts/deps.sh build format test mpi deb"
  run make -s -n -C "$top" deb
  assert_line "scripts/deps.sh build deb"
  assert_line "scripts/deb.sh build-deb"
}
