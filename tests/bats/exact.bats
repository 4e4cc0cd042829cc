#!/usr/bin/env bats
# Exact by default (docs/mechanisms.md, "Exact by default"): one small program
# per way an unmodified program used to compute something else under the
# preload, each run under every kind of policy the docs allow and compared
# byte for byte with its run without rtl. The real programs are in
# tests/programs (make test-programs).

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
  mkdir -p "$REP/init" "$REP/builtin"
  "$RTL_BUILD/tools/rtlctl" init | sed "s|^report = .*|report = $REP/init/%e.%p.json|" \
    >"$POL/init.ini"
  policy none-grant '[rule all]' 'protect = none' \
    'on_read = count, grant-rw' 'on_write = count, grant-rw'
  policy 1k-read '[rule io]' 'size = 1K..' 'protect = read'
  policy read-grant '[rule all]' 'protect = read' 'on_write = count, grant-rw'
  policy read-epoch '[rule all]' 'protect = read' \
    'on_write = count, grant-rw' 'epoch = 1ms'
  policy sample-7 '[rule all]' 'sample = 7' 'protect = none' \
    'on_read = count, grant-read' 'on_write = count, grant-rw'
  MODES=(init none-grant 1k-read read-grant read-epoch sample-7)
}

# every_policy CMD...: the run without rtl, then one per policy; all alike.
every_policy() {
  local m
  run_mode none "$@"
  for m in "${MODES[@]}"; do
    run_mode "$m" "$@"
  done
  same_as_without "${MODES[@]}"
}

@test "waitpid into a malloc'd status: the kernel's write lands (gcc's driver)" {
  every_policy "$PROGS/wait_status"
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_output "child exited 42, rusage filled"
  # The call was trapped and made by rtl, its buffer resolved.
  [[ $(report_sum none-grant syscall_buffers) -gt 0 ]]
  [[ $(report_sum none-grant syscalls_trapped) -gt 0 ]]
  [[ $(report_sum none-grant syscalls_refused) -eq 0 ]]
}

@test "path names and results in malloc'd memory: open, stat, readlink, rename (git, tar)" {
  every_policy "$PROGS/path_names"
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "stat: ok, size 14"
  assert_line "readlink: 14 path_names.tmp"
}

@test "path names in blocks an epoch re-protects: across two pages, and from two threads, under every mechanism (bash, git)" {
  local mech
  for mech in auto alias page; do
    policy "$mech-epoch" '[rule all]' "mechanism = $mech" 'protect = none' \
      'on_read = count, grant-read' 'on_write = count, grant-rw' 'epoch = 1ms'
  done
  run_mode none "$PROGS/name_across_pages"
  for mech in auto alias page; do
    run_mode "$mech-epoch" "$PROGS/name_across_pages"
  done
  same_as_without auto-epoch alias-epoch page-epoch
  run cat "$BATS_TEST_TMPDIR/runs/page-epoch.out"
  assert_output "0 of 20 opens failed"
  # The name's block was trapped and its call resolved by rtl.
  [[ $(report_sum page-epoch syscall_buffers) -gt 0 ]]
  # Two threads, names in blocks that share pages: the epoch changing a
  # page while a call checked it (94-264 of 100000 opens failed before).
  run_mode none "$PROGS/name_across_pages" threads
  for mech in auto alias page; do
    run_mode "$mech-epoch" "$PROGS/name_across_pages" threads
  done
  same_as_without auto-epoch alias-epoch page-epoch
}

@test "pread into buffers an epoch re-protects: no call ever fails (sqlite, perl)" {
  every_policy "$PROGS/pread_epoch" 20000
  run cat "$BATS_TEST_TMPDIR/runs/read-epoch.out"
  assert_output --partial "0 reads failed"
  [[ $(report_sum read-epoch write_traps) -gt 0 ]]
}

@test "mbstowcs and wcstombs between small malloc'd buffers give the strings' lengths (CPython)" {
  every_policy "$PROGS/wide_chars"
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "'print(1)': 8 wide, 8 back, same"
}

@test "main leaves with pthread_exit: the process still ends, with status 0" {
  for m in none "${MODES[@]}"; do
    run_mode "$m" timeout 20 "$PROGS/pthread_exit"
  done
  same_as_without "${MODES[@]}"
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/read-epoch.rc")" 0
}

@test "execve, posix_spawn and system with malloc'd arguments and environment (tar, make)" {
  every_policy "$PROGS/spawn_args"
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "spawned with malloc'd arguments"
  assert_line "system: exit 0"
}

@test "an alternate signal stack in a selected block, under every policy (gawk's libsigsegv)" {
  every_policy "$PROGS/altstack"
}

@test "an alternate signal stack that an epoch would re-protect, under every mechanism (gawk, clang, ruby)" {
  # The kernel writes each signal frame there, with no wrapper to see it:
  # the block stays granted while it is the stack. Re-protected, the next
  # signal killed the process with a SIGSEGV no handler saw (alias with
  # epoch = 1ms: gawk, clang and ruby).
  local mech size
  for mech in auto alias page; do
    policy "$mech-epoch" '[rule all]' "mechanism = $mech" 'protect = read' \
      'on_write = count, grant-rw' 'epoch = 1ms'
  done
  # A block that shares its pages (a slot's under auto), and one of whole
  # pages. Each leaves room for a frame: an AVX-512 CPU's takes 3 KiB
  # (AT_MINSIGSTKSZ 3376), and a handler run past the stack's base on one
  # of 3072 bytes (written there till 2026-11-26) into a protected block,
  # where the kernel put the fault's frame at the stack's top again, for
  # ever (docs/limits.md).
  for size in 10240 65536; do
    run_mode none "$PROGS/altstack" "$size" 20
    for mech in auto alias page; do
      run_mode "$mech-epoch" "$PROGS/altstack" "$size" 20
    done
    same_as_without auto-epoch alias-epoch page-epoch
    run cat "$BATS_TEST_TMPDIR/runs/alias-epoch.out"
    assert_line "20 of 20 signals on the alternate stack"
  done
  # The epochs ran: the stack's block was granted, others re-protected.
  [[ $(report_sum alias-epoch write_traps) -gt 0 ]]
}

@test "an alternate signal stack freed while it is the stack keeps its memory (ruby at exit)" {
  # ruby frees its alternate stack at exit and keeps it as the stack. The
  # block was given out again and re-protected by an epoch: the next
  # signal found no room for its frame and the process died of a SIGSEGV
  # no handler saw (ruby under an epoch, about one run in five). A block
  # freed while pinned as a stack now stays as it is.
  local mech
  for mech in auto alias page; do
    policy "$mech-epoch" '[rule all]' "mechanism = $mech" 'protect = read' \
      'on_write = count, grant-rw' 'epoch = 1ms'
  done
  for size in 10240 65536; do
    run_mode none "$PROGS/altstack" "$size" 20 freed
    for mech in auto alias page; do
      run_mode "$mech-epoch" "$PROGS/altstack" "$size" 20 freed
    done
    same_as_without auto-epoch alias-epoch page-epoch
    run cat "$BATS_TEST_TMPDIR/runs/alias-epoch.out"
    assert_line "20 of 20 signals on the freed alternate stack"
  done
}

@test "the built-in policy and rtlctl init's select with auto, the exact mechanism" {
  RTL_CONFIG=@builtin RTL_REPORT=$REP/builtin/%e.%p.json LD_PRELOAD=$PRELOAD \
    run "$PROGS/heap_walk"
  assert_success
  reports_made "$REP/builtin"
  assert_equal "$(report_get "$(ls "$REP"/builtin/*.json | head -1)" '[x["mechanism"] for x in r["rules"]]')" "['auto']"
  assert_equal "$(report_get "$(ls "$REP"/builtin/*.json | head -1)" 'r["totals"]["stale_traps"]')" 0
  run "$RTL_BUILD/tools/rtlctl" show "$POL/init.ini"
  assert_line "mechanism = auto"
}

@test "traps on objects reached through slots count for their rule and site (python3)" {
  policy al '[rule io]' 'size = 1K..' 'mechanism = alias' 'protect = read'
  policy au '[rule io]' 'size = 1K..' 'protect = read'
  for m in al au; do
    run_mode "$m" python3 -c 'import json; print(len(json.dumps(list(range(50000)))))'
    # Every trap belongs to a rule and a site: the sums agree.
    for f in "$REP/$m"/*.json; do
      assert_equal "$(report_get "$f" 'r["totals"]["write_traps"] == sum(x["write_traps"] for x in r["rules"]) == sum(s["write_traps"] for s in r["sites"])')" True
    done
    [[ $(report_sum "$m" write_traps) -gt 0 ]]
  done
}

@test "rtlctl check warns on a swizzle rule that traps, naming the docs" {
  printf '[rule s]\nmechanism = swizzle\nprotect = read\n' >"$POL/sw.ini"
  run --separate-stderr "$RTL_BUILD/tools/rtlctl" check "$POL/sw.ini"
  assert_success
  assert_output "$POL/sw.ini: ok, 1 rule"
  [[ $stderr == *"warning: rule s: swizzle with protect = read"* ]]
  [[ $stderr == *"docs/mechanisms.md"* ]]
  printf '[rule s]\nmechanism = swizzle\nprotect = rw\n' >"$POL/sw-rw.ini"
  run --separate-stderr "$RTL_BUILD/tools/rtlctl" check "$POL/sw-rw.ini"
  assert_equal "$stderr" ""
}

@test "a program that runs off the end of its block: rtl says so, SIGSEGV as without rtl, memory bounded" {
  policy alias-read '[rule all]' 'mechanism = alias' 'protect = read'
  policy swizzle-rw '[rule all]' 'mechanism = swizzle'
  local m size peak said=0
  run -139 "$PROGS/overrun" 56
  for m in "${MODES[@]}" alias-read swizzle-rw; do
    size=56 # rtlctl init's small objects
    [[ $m == 1k-read ]] && size=2000
    run -139 env LD_PRELOAD="$PRELOAD" RTL_CONFIG="$POL/$m.ini" \
      "$PROGS/peakmem" "$BATS_TEST_TMPDIR/$m.mem" -- "$PROGS/overrun" "$size"
    assert_line "first byte x"
    # Without the bound, a run populates the views' memory until the
    # kernel stops it (gigabytes); here it stops at what rtl handed out.
    peak=$(cut -d' ' -f1 "$BATS_TEST_TMPDIR/$m.mem")
    ((peak < 262144)) || { echo "mode $m: peak $peak KiB" >&2; return 1; }
    # A selected block (sample = 7 may pass it by) ends in rtl's line.
    if [[ $(report_sum "$m" selected) -gt 0 ]]; then
      assert_line --regexp "^rtl: access at 0x[0-9a-f]+, (past the end of the memory rtl has handed out|in rtl's memory but outside every live block)"
      said=$((said + 1))
    fi
  done
  ((said >= 6))
}

@test "a program that runs off the start of its block, downwards: rtl says so, SIGSEGV as without rtl, memory bounded" {
  # Below the preload's pool lies offset space rtl never hands out. It is
  # inside the views' file once the pool has memory: without the gap kept
  # PROT_NONE, this scan read its way through it (bc under a swizzle rule
  # with protect = read populated 24 GB, and the OOM killer took it and
  # another process).
  policy alias-read '[rule all]' 'mechanism = alias' 'protect = read'
  policy swizzle-rw '[rule all]' 'mechanism = swizzle'
  local m size peak said=0
  run -139 "$PROGS/overrun" 56 down
  for m in "${MODES[@]}" alias-read swizzle-rw; do
    for size in 56 8192; do # a slot's block; one of whole pages, in the views
      [[ $m == 1k-read && $size == 56 ]] && continue
      run -139 env LD_PRELOAD="$PRELOAD" RTL_CONFIG="$POL/$m.ini" \
        "$PROGS/peakmem" "$BATS_TEST_TMPDIR/$m.$size.mem" -- "$PROGS/overrun" "$size" down
      assert_line "first byte x"
      refute_line --partial "without a fault"
      peak=$(cut -d' ' -f1 "$BATS_TEST_TMPDIR/$m.$size.mem")
      ((peak < 262144)) || { echo "mode $m, size $size: peak $peak KiB" >&2; return 1; }
      # A block reached through NONE (protect = none, in place) has no
      # memory below it in that view at all.
      if [[ $output == *"rtl: access"* ]]; then
        assert_line --regexp "^rtl: access (at 0x[0-9a-f]+, in rtl's memory but outside every live block|to rtl's views (past the memory rtl has handed out|outside any region))"
        said=$((said + 1))
      fi
    done
  done
  # Every mode selects the 8192-byte block (sample = 7 its first one too).
  ((said >= 8))
}
