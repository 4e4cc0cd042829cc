#!/usr/bin/env bats
# The layers of docs/internals.md ("Libraries, and which may use which"),
# checked on every include of the tree's own headers by
# scripts/check-layers.py: the tree keeps them, and the check does fail
# where a layer includes what it may not.

bats_require_minimum_version 1.5.0
load helpers

@test "layers: every include in the tree is one its layer may make" {
  run "$top/scripts/check-layers.py" "$top"
  assert_success
  assert_output ""
}

# A small tree of the same shape: the core reaching into the preload.
@test "layers: core/ including a preload/ header fails, naming file and line" {
  t=$BATS_TEST_TMPDIR/tree
  mkdir -p "$t/core/region" "$t/preload/shim" "$t/decoder"
  : >"$t/preload/shim/next.h"
  : >"$t/decoder/decoder.h"
  printf '#include "decoder/decoder.h"\n#include "preload/shim/next.h"\n' >"$t/core/region/views.c"
  run "$top/scripts/check-layers.py" "$t"
  assert_failure
  assert_output 'core/region/views.c:2: core/ may not include "preload/shim/next.h" (docs/internals.md)'
}

@test "layers: tools/ may read the record's format but no other preload header" {
  t=$BATS_TEST_TMPDIR/tree
  mkdir -p "$t/tools/interpret" "$t/preload/track" "$t/preload/engine"
  : >"$t/preload/track/format.h"
  : >"$t/preload/engine/record.h"
  printf '#include "preload/track/format.h"\n#include "preload/engine/record.h"\n' >"$t/tools/interpret/raw_read.c"
  run "$top/scripts/check-layers.py" "$t"
  assert_failure
  assert_output 'tools/interpret/raw_read.c:2: tools/ may not include "preload/engine/record.h" (docs/internals.md)'
}

@test "layers: an include that does not name its folder from the top fails" {
  t=$BATS_TEST_TMPDIR/tree
  mkdir -p "$t/core/region"
  : >"$t/core/region/views.h"
  printf '#include "views.h"\n' >"$t/core/region/views.c"
  run "$top/scripts/check-layers.py" "$t"
  assert_failure
  assert_output --partial 'core/region/views.c:1: "views.h" does not name a file from the top of the tree'
}
