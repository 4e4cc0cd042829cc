#!/usr/bin/env bats
# Every fuzz target runs once over its corpus (seeds and every input that
# once crashed it) without a fuzzing engine: the regression half of
# `make fuzz`.

load helpers


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

@test "make fuzz asks for the runtime package of the clang that is installed" {
  tmp=$BATS_TEST_TMPDIR
  for v in 16.0.6:libclang-rt-16-dev 14.0.6:libclang-rt-14-dev 13.0.1:libclang-common-13-dev; do
    printf '#!/bin/sh\necho %s\n' "${v%%:*}" >"$tmp/clang"
    chmod +x "$tmp/clang"
    run "$top/scripts/clang-rt-package.sh" "$tmp/clang"
    assert_success
    assert_output "${v#*:}"
  done
  printf '#!/bin/sh\necho garbage\n' >"$tmp/clang"
  run "$top/scripts/clang-rt-package.sh" "$tmp/clang"
  assert_failure
  # On this machine: the package named is the one holding clang's libFuzzer.
  command -v clang >/dev/null || skip "no clang installed"
  lib=$(clang --print-runtime-dir)/libclang_rt.fuzzer-$(uname -m).a
  [[ -f $lib ]] || skip "clang's runtimes are not installed"
  run dpkg -S "$lib"
  assert_output --regexp "^$("$top/scripts/clang-rt-package.sh")(:[a-z0-9]+)?: "
}
