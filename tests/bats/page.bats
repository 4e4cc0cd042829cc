#!/usr/bin/env bats
# mechanism = page (docs/compare.md): page protection on the preload's own
# block layout. Exact trap counts on tests/progs/granularity against auto's,
# and the page mechanism under what the other mechanisms are tested with:
# system calls, fork, threads, dirty epochs; each run byte-identical to the
# run without the preload.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
  GRAN=$PROGS/granularity
  # The interpreter itself, not a wrapper script that runs it (pyenv's).
  PY=$(python3 -c 'import sys; print(sys.executable)')
}


# both NAME LINES...: the policy under page and under auto (NAME-page,
# NAME-auto).
both() {
  local name=$1 m
  shift
  for m in page auto; do
    policy "$name-$m" "mechanism = $m" "$@"
  done
}

counts='(r["totals"]["traps"], r["totals"]["false_sharing_traps"], r["totals"]["grants"], r["totals"]["granted_bytes"], r["totals"]["touched_bytes"])'

@test "page: pairs of 64-byte blocks on one page trap twice each, once false sharing; auto once" {
  both shared '[rule objs]' 'site = *new_block' 'protect = read' 'on_write = count, grant-rw'
  run_mode none "$GRAN" shared 32 64
  run_mode shared-page "$GRAN" shared 32 64
  run_mode shared-auto "$GRAN" shared 32 64
  same_as_without shared-page shared-auto
  # 64 blocks of 64 bytes: one page. Each block's first write traps under
  # both; its second, after its neighbour was made read-only on the same
  # page, traps only under page, though the block allowed it itself.
  assert_equal "$(rep shared-page "$counts")" "(64, 32, 64, 262144, 2048)"
  assert_equal "$(rep shared-auto "$counts")" "(32, 0, 32, 2048, 2048)"
  assert_equal "$(rep shared-page 'r["rules"][0]["mechanism"], r["rules"][0]["false_sharing_traps"], r["sites"][0]["false_sharing_traps"]')" \
    "('page', 32, 32)"
}

@test "page: a 256 KiB block written whole takes 64 page traps, auto 1" {
  both big '[rule objs]' 'site = *new_block' 'protect = read' 'on_write = count, grant-rw'
  run_mode none "$GRAN" big 262144
  run_mode big-page "$GRAN" big 262144
  run_mode big-auto "$GRAN" big 262144
  same_as_without big-page big-auto
  # No false sharing: the pages are the block's own.
  assert_equal "$(rep big-page "$counts")" "(64, 0, 64, 262144, 262144)"
  assert_equal "$(rep big-auto "$counts")" "(1, 0, 1, 262144, 262144)"
}

@test "page: protect = none, a read grants the page for every block on it" {
  both none '[rule objs]' 'site = *new_block' 'protect = none' \
    'on_read = count, grant-read' 'on_write = count, grant-rw'
  run_mode none "$GRAN" shared 32 64
  run_mode none-page "$GRAN" shared 32 64
  run_mode none-auto "$GRAN" shared 32 64
  same_as_without none-page none-auto
  # The memset of a block is a write to a none block: one write trap each
  # under auto. Under page the neighbour's allocation drops the page to
  # none again each time: the block's second write traps too.
  assert_equal "$(rep none-auto 'r["totals"]["write_traps"], r["totals"]["read_traps"]')" "(32, 0)"
  assert_equal "$(rep none-page 'r["totals"]["write_traps"], r["totals"]["false_sharing_traps"]')" "(64, 32)"
}

@test "page: system calls, fork and threads on page blocks, identical to the run without rtl" {
  policy pg-read 'mechanism = page' '[rule all]' 'protect = read'
  policy pg-none 'mechanism = page' '[rule all]' 'protect = none' 'on_read = count, grant-rw'
  run_mode none "$PROGS/fork_iso"
  run_mode pg-read "$PROGS/fork_iso"
  same_as_without pg-read
  run cat "$BATS_TEST_TMPDIR/runs/pg-read.out"
  assert_line 'first fork: isolated'
  assert_line 'second fork: isolated'
  run_mode none "$PROGS/stress"
  run_mode pg-none "$PROGS/stress"
  same_as_without pg-none
  [[ $(report_sum pg-none traps) -gt 50000 ]]
  # The kernel reads and writes page blocks: paths in malloc'd buffers,
  # then a file written and read back through them by Python.
  run_mode none "$PROGS/path_names"
  run_mode pg-none "$PROGS/path_names"
  same_as_without pg-none
  run_mode none "$PY" -c 'import os, json
d = json.dumps({str(i): [i] * 20 for i in range(3000)})
open("f", "w").write(d); print(len(open("f").read()), os.stat("f").st_size)'
  run_mode pg-read "$PY" -c 'import os, json
d = json.dumps({str(i): [i] * 20 for i in range(3000)})
open("f", "w").write(d); print(len(open("f").read()), os.stat("f").st_size)'
  same_as_without pg-read
}

@test "page: dirty epochs diff written pages against their twins" {
  policy pg-dirty 'mechanism = page' '[rule all]' 'protect = read' \
    'on_write = count, dirty, grant-rw' 'epoch = 2ms'
  policy au-dirty 'mechanism = auto' '[rule all]' 'protect = read' \
    'on_write = count, dirty, grant-rw' 'epoch = 2ms'
  prog='import json
d = {}
for i in range(40000):
    d[str(i)] = [i, str(i)]
print(len(json.dumps(d)))'
  run_mode none "$PY" -c "$prog"
  run_mode pg-dirty "$PY" -c "$prog"
  run_mode au-dirty "$PY" -c "$prog"
  same_as_without pg-dirty au-dirty
  # A page tracker saves whole pages: page bytes are 4 KiB per written
  # page, at least the bytes that differ; regions diff their blocks.
  run rep pg-dirty 'sum(e["page_bytes"] for e in r["epochs"]) % 4096, sum(e["page_bytes"] for e in r["epochs"]) >= sum(e["diff_bytes"] for e in r["epochs"]) > 0'
  assert_output "(0, True)"
  run rep au-dirty 'sum(e["diff_bytes"] for e in r["epochs"]) > 0'
  assert_output "True"
}

@test "page: rtlctl check and show take it" {
  printf '[rtl]\nmechanism = page\n[rule a]\nprotect = read\nepoch = 10ms\n' >"$BATS_TEST_TMPDIR/p.ini"
  run "$RTL_BUILD/tools/rtlctl" check "$BATS_TEST_TMPDIR/p.ini"
  assert_success
  run "$RTL_BUILD/tools/rtlctl" show "$BATS_TEST_TMPDIR/p.ini"
  assert_line 'mechanism = page'
}

@test "dirty epochs count a change once, in the epoch it was made, whatever the mechanism" {
  # One 64 KiB block written, 5 ms epochs for 30 ms, one byte of it written
  # again, 30 ms more: 65280 bytes changed, then 1. auto's blocks of whole
  # pages are rtl regions, whose diffs once ran against the twin of the
  # first write forever: the second write's epoch counted the first's
  # changes again.
  for m in page auto alias; do
    policy "once-$m" "mechanism = $m" '[rule objs]' 'site = *new_block' 'protect = read' \
      'on_write = count, dirty, grant-rw' 'epoch = 5ms'
    run_mode "once-$m" "$GRAN" big 65536 30
    run rep "once-$m" 'sum(e["diff_bytes"] for e in r["epochs"]), len(r["epochs"]) > 5'
    # Of 65536 bytes, those where i * 7 mod 256 is 0 stay 0: 256 of them.
    assert_output "(65281, True)"
    # Whole pages: the block's 16, then its first again (a page written
    # across an epoch's end is saved in both epochs by a page tracker).
    run rep "once-$m" '(lambda p: p % 4096 == 0 and 65536 + 4096 <= p <= 2 * 65536 + 4096)(sum(e["page_bytes"] for e in r["epochs"]))'
    assert_output True
  done
}
