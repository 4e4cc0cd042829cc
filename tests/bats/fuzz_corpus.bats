#!/usr/bin/env bats
# Every fuzz target runs once over its corpus (seeds and every input that
# once crashed it) without a fuzzing engine: the regression half of
# `make fuzz`.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
  top=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  build=${RTL_BUILD:-$top/build}
}

replay() {
  local target=$1 n
  n=$(ls "$top/tests/fuzz/corpus/$target" | wc -l)
  [ "$n" -gt 0 ]
  run "$build/tests/fuzz/replay-$target" "$top"/tests/fuzz/corpus/"$target"/*
  assert_success
  assert_line "1..$n"
  refute_output --partial "not ok"
  [ "$(grep -c '^ok ' <<<"$output")" -eq "$n" ]
}

@test "policy parser: corpus replays clean" {
  replay policy
}

@test "report reader: corpus replays clean" {
  replay report
}

@test "decoder: corpus replays clean" {
  replay decoder
}

@test "diff apply: corpus replays clean" {
  replay diff
}
