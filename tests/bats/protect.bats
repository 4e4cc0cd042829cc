#!/usr/bin/env bats
# The protection backend (core/prot/prot.c): every protection change of the
# preload's copies goes through it, as write-protect bits in the page
# tables where the kernel has them (userfaultfd) and mprotect elsewhere.
# The report says which ran and why; RTL_PROTECT=mprotect, an older
# kernel, qemu-user or a seccomp filter that refuses userfaultfd fall back;
# SIGBUS is rtl's as SIGSEGV is, and the program's own SIGBUS faults stay
# its own; fork keeps each block's protection; the mappings stay flat
# however many blocks are protected; epochs protect again in runs.
# tests/run.sh runs this file twice: as the kernel allows, and with
# RTL_PROTECT=mprotect (the fallback).

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
}

# backend MODE: the backend the report of MODE's processes names.
backend() {
  rep "$1" 'r["protection"]["backend"]'
}

@test "protect: the report and its header say which backend ran and why" {
  policy rg '[rule all]' 'size = 64' 'protect = read' 'on_write = count, grant-rw'
  run_mode rg "$PROGS/live_blocks" 1000 64 made 0
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/rg.rc")" 0
  local b why
  b=$(backend rg)
  why=$(rep rg 'r["protection"]["why"]')
  if [[ ${RTL_PROTECT:-} == mprotect ]]; then
    assert_equal "$b" mprotect
    assert_equal "$why" "mprotect: chosen by RTL_PROTECT=mprotect"
  else
    [[ $b == "page tables" || $why == mprotect:* ]] || fail "$b: $why"
  fi
  [[ $why == "$b: "* ]] || fail "the why does not open with the backend: $why"
  # The calls it made: one write-protect call or mprotect per trap at
  # most, and mprotect only under the fallback.
  local calls mp traps
  calls=$(rep rg 'r["totals"]["protect_calls"]')
  mp=$(rep rg 'r["totals"]["protect_mprotects"]')
  traps=$(rep rg 'r["totals"]["write_traps"]')
  assert_equal "$traps" 1000
  ((calls >= traps)) || fail "$calls calls for $traps traps"
  if [[ $b == "page tables" ]]; then
    ((mp == 0)) || fail "$mp mprotects under page tables"
  else
    assert_equal "$mp" "$calls"
  fi
  run "$rtlctl" report "$REP/rg"/*.raw
  assert_success
  assert_line --regexp "^protect   $b: .*; $calls calls, $mp of them mprotect$"
  # rtlctl check asks the kernel as the preload does, in its own process.
  run "$rtlctl" check "$POL/rg.ini"
  assert_success
  assert_line --index 1 "protection changes here by $why"
  # A policy whose rules change no protection outside the views: no word.
  policy sw '[rule all]' 'mechanism = swizzle' 'size = 64' 'protect = rw'
  run "$rtlctl" check "$POL/sw.ini"
  assert_success
  assert_output "$POL/sw.ini: ok, 1 rule"
}

@test "protect: 10^6 live protected blocks, written at random, under the default vm.max_map_count" {
  # Each written block is read-write among read-only neighbours in its
  # copy. With mprotect that is a mapping per block or two: near the limit
  # a grant finds no mapping left and a whole copy loses its protection
  # (said in a note); in the page tables it is a bit per page, and every
  # block stays protected, each first write a trap, in a handful of
  # mappings. Either way the program runs to its end, exactly.
  policy rg '[rule all]' 'size = 64' 'protect = read' 'on_write = count, grant-rw'
  RUN_LIMIT=600 run_mode rg "$PROGS/live_blocks" 1000000 64 random 0
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/rg.rc")" 0
  run cat "$BATS_TEST_TMPDIR/runs/rg.out"
  assert_line "children ok, parent's blocks ok"
  local maps selected fallbacks written traps
  maps=$(sed -n 's/^maps //p' "$BATS_TEST_TMPDIR/runs/rg.out")
  written=$(sed -n 's/^written //p' "$BATS_TEST_TMPDIR/runs/rg.out")
  traps=$(rep rg 'r["totals"]["write_traps"]')
  selected=$(rep rg 'r["totals"]["selected"]')
  fallbacks=$(rep rg 'r["totals"]["fallbacks"]')
  assert_equal "$((selected + fallbacks))" 1000000
  ((maps < $(cat /proc/sys/vm/max_map_count))) || fail "$maps mappings"
  if [[ $(backend rg) == "page tables" ]]; then
    assert_equal "$fallbacks" 0
    assert_equal "$traps" "$written"
    ((maps < 1000)) || fail "$maps mappings for 10^6 protected blocks"
  else
    ((traps < written)) || fail "$traps traps for $written blocks written under mprotect"
    assert_equal "$(rep rg 'any(n.startswith("the process ran out of mappings at a grant ") for n in r["notes"])')" True
  fi
}

@test "protect: the program's own SIGBUS faults are its own, rtl's traps never reach it" {
  local m
  for m in auto alias page; do
    policy "bus-$m" "mechanism = $m" '[rule blocks]' 'size = 48' 'protect = read' \
      'on_write = count, grant-rw'
  done
  run_mode none "$PROGS/own_sigbus"
  for m in auto alias page; do
    run_mode "bus-$m" "$PROGS/own_sigbus"
  done
  same_as_without bus-auto bus-alias bus-page
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "handler reads back: yes"
  assert_line "SIGBUS blocked while blocks were written: yes"
  assert_line "past the end of the file: 1 SIGBUS, at offset 4096"
  for m in auto alias; do
    assert_equal "$(rep "bus-$m" '(r["totals"]["selected"], r["totals"]["write_traps"])')" "(100, 100)"
  done
  [[ $(rep bus-page 'r["totals"]["write_traps"]') -ge 1 ]]
}

@test "protect: a forked child's blocks keep their protection" {
  # The parent writes about half its blocks (each traps once, then is
  # read-write); the child writes all of them: only those the parent left
  # read-only trap in the child. Every block traps exactly once in all.
  local m
  for m in auto alias page; do
    policy "fork-$m" "mechanism = $m" '[rule all]' 'size = 64' 'protect = read' \
      'on_write = count, grant-rw'
    run_mode "fork-$m" "$PROGS/live_blocks" 20000 64 random 1
    assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/fork-$m.rc")" 0
    run cat "$BATS_TEST_TMPDIR/runs/fork-$m.out"
    assert_line "children ok, parent's blocks ok"
  done
  for m in auto alias; do
    assert_equal "$(rep "fork-$m" '(len(r["processes"]), r["totals"]["write_traps"])')" "(2, 20000)"
  done
  # Blocks of whole pages (auto: in place under mprotect, the copy of such
  # blocks under page tables): the same.
  policy fork-big '[rule all]' 'size = 8K' 'protect = read' 'on_write = count, grant-rw'
  run_mode fork-big "$PROGS/live_blocks" 2000 8192 random 1
  run cat "$BATS_TEST_TMPDIR/runs/fork-big.out"
  assert_line "children ok, parent's blocks ok"
  assert_equal "$(rep fork-big '(len(r["processes"]), r["totals"]["write_traps"])')" "(2, 2000)"
}

@test "protect: a seccomp filter that refuses userfaultfd: mprotect, and the report says why" {
  policy rg '[rule all]' 'size = 64' 'protect = read' 'on_write = count, grant-rw'
  run_mode rg "$PROGS/no_uffd" "$PROGS/live_blocks" 5000 64 made 1
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/rg.rc")" 0
  run cat "$BATS_TEST_TMPDIR/runs/rg.out"
  assert_line "children ok, parent's blocks ok"
  assert_equal "$(backend rg)" mprotect
  if [[ ${RTL_PROTECT:-} != mprotect ]]; then
    assert_equal "$(rep rg 'r["protection"]["why"]')" \
      "mprotect: userfaultfd(2) was refused (EPERM: vm.unprivileged_userfaultfd, or a seccomp filter)"
  fi
  assert_equal "$(rep rg 'r["totals"]["write_traps"]')" 5000
}

@test "protect: an epoch protects again in runs of pages, and one that takes long puts the next off" {
  # 20000 blocks of 64 bytes, written 10 times with 30 ms between: each
  # epoch (20 ms) protects again the blocks written since, in runs of
  # adjacent pages (one call per run, not one per block: 64 blocks of 64
  # bytes to a page, each through its own copy, so a run per copy).
  local m
  for m in auto alias; do
    policy "ep-$m" "mechanism = $m" '[rule all]' 'size = 64' 'protect = read' \
      'on_write = count, grant-rw' 'epoch = 20ms'
  done
  run_mode none "$PROGS/epoch_blocks" 20000 10 30000
  for m in auto alias; do
    run_mode "ep-$m" "$PROGS/epoch_blocks" 20000 10 30000
  done
  same_as_without ep-auto ep-alias
  for m in auto alias; do
    local epochs calls blocks traps
    epochs=$(rep "ep-$m" 'r["totals"]["epochs"]')
    calls=$(rep "ep-$m" 'r["totals"]["epoch_calls"]')
    blocks=$(rep "ep-$m" 'r["totals"]["epoch_blocks"]')
    traps=$(rep "ep-$m" 'r["totals"]["write_traps"]')
    ((epochs > 0 && blocks > 20000)) || fail "$m: $epochs epochs, $blocks blocks"
    # 64 blocks of 64 bytes to a page, one per copy: runs of pages of
    # one copy, far fewer calls than blocks.
    ((calls * 10 < blocks)) || fail "$m: $calls calls for $blocks blocks"
    ((traps > 20000)) || fail "$m: $traps traps"
  done
  # 200000 blocks each epoch: its work is more than a tenth of 1 ms.
  policy ep-long '[rule all]' 'size = 64' 'protect = read' 'on_write = count, grant-rw' \
    'epoch = 1ms'
  run_mode ep-long "$PROGS/epoch_blocks" 200000 5 1000
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/ep-long.rc")" 0
  [[ $(rep ep-long 'r["totals"]["epochs_stretched"]') -gt 0 ]]
  run "$rtlctl" report "$REP/ep-long"/*.raw
  assert_line --regexp '^epochs    [0-9]+ \(.* protection calls\), [0-9]+ put off by [0-9.]+ ms in all: an epoch.s work took over a tenth of its period$'
}

@test "protect: a system call into a block an epoch's late call lowered is made again, not refused" {
  # A thread frees, allocates and writes blocks while the main thread
  # writes a fresh block and reads a pipe into it. An epoch's call for a
  # freed block (or a free page it bridged) may land on a block granted
  # since: the record allows the write, the pages refuse it, and the
  # kernel said EFAULT (CPython's json.tool: "OSError: [Errno 14] Bad
  # address" under alias and an epoch). The call is made again after the
  # pages get their record's protection.
  local m
  for m in auto alias page; do
    policy "ri-$m" "mechanism = $m" '[rule all]' 'protect = read' \
      'on_write = count, grant-rw' 'epoch = 1ms'
  done
  run_mode none "$PROGS/epoch_read_into" 20000
  for m in auto alias page; do
    run_mode "ri-$m" "$PROGS/epoch_read_into" 20000
  done
  same_as_without ri-auto ri-alias ri-page
}
