#!/usr/bin/env bats
# The soak program, briefly: 8 threads define, protect, trap, diff, fork and
# free with random sizes, every byte checked against a shadow copy.
# `make soak` runs the same for ten minutes.

load helpers

@test "soak: 8 threads, no mismatch, nothing leaked" {
  run "$build/tests/progs/soak" -t 8 -n 4000 -S 42
  assert_success
  assert_output --regexp "soak: 8 threads, 32000 operations, [1-9][0-9]* traps \([1-9][0-9]* stale\), [1-9][0-9]* diffs, [1-9][0-9]* forks, 0 mismatches, 0 regions left"
}

@test "soak: another seed, one thread" {
  run "$build/tests/progs/soak" -t 1 -n 20000 -S 7
  assert_success
  assert_output --partial "0 mismatches, 0 regions left"
}

@test "soak: bad arguments give a usage line" {
  run "$build/tests/progs/soak" -t 0
  assert_equal "$status" 2
  assert_output --partial "usage: soak"
}
