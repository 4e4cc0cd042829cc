#!/usr/bin/env bats
# The preload's promises on small target programs (tests/progs), one test
# per promise: chaining of the program's SIGSEGV handler and mprotect,
# death by NULL, threads, fork isolation, the region API, the policy file.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
}

@test "a program's own SIGSEGV handler and mprotect of its own page work in every view" {
  policy page-read '[rule page]' 'size = 8K' 'protect = read'
  policy page-none '[rule page]' 'size = 8K' 'protect = none'
  for m in none all page-read page-none; do
    run_mode "$m" "$PROGS/own_segv"
  done
  same_as_without all page-read page-none
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line 'handler reads back: yes'
  assert_line 'after write to a read-only page: Hello, faults 1'
  assert_line 'signal() returns the handler: yes'
  # rtl saw the program's two faults and passed them on; with the page in
  # the RO or NONE view it also trapped (and granted) the program's
  # first write through it.
  [[ $(report_sum all foreign) -eq 2 ]]
  [[ $(report_sum page-read foreign) -eq 2 ]]
  [[ $(report_sum page-none foreign) -eq 2 ]]
  [[ $(report_sum page-read traps) -ge 1 ]]
  [[ $(report_sum page-none traps) -ge 1 ]]
}

@test "a NULL dereference still dies of SIGSEGV, without a word from rtl" {
  RTL_CONFIG=$POL/all.ini LD_PRELOAD=$PRELOAD run --separate-stderr \
    "$PROGS/null_crash"
  assert_equal "$status" 139
  assert_output "about to crash"
  assert_equal "$stderr" ""
  run "$PROGS/null_crash"
  assert_equal "$status" 139
}

@test "8 threads allocate, resize and free through every malloc-family call" {
  policy trap-none '[rule small]' 'size = 16..600' 'protect = none'
  # swizzle: every block a region on 64-byte granules (preload/place/arena.c
  # asks jemalloc for them without its alignment flag, and checks)
  policy sw-all '[rule all]' 'mechanism = swizzle'
  for m in none all range trap-none sw-all; do
    run_mode "$m" "$PROGS/stress"
  done
  same_as_without all range trap-none sw-all
  [[ $(report_sum sw-all selected) -gt 50000 ]]
  assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/runs/all.out")" 8
  [[ $(report_sum all selected) -gt 50000 ]]
  [[ $(report_sum all fallbacks) -eq 0 ]]
  [[ $(report_sum range selected) -gt 0 ]]
  [[ $(report_sum trap-none traps) -gt 0 ]]
}

@test "fork: parent and child each keep their own writes to selected blocks" {
  run_mode none "$PROGS/fork_iso" where
  run_mode all "$PROGS/fork_iso" where
  run_mode range "$PROGS/fork_iso" where
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line 'block of 200: not a region'
  run cat "$BATS_TEST_TMPDIR/runs/all.out"
  assert_line 'block of 24: region'
  assert_line 'block of 3145728: region'
  assert_line 'first fork: isolated'
  assert_line 'second fork: isolated'
  run cat "$BATS_TEST_TMPDIR/runs/range.out"
  assert_line 'block of 200: region'
  assert_line 'block of 5000: not a region'
  assert_line 'second fork: isolated'
  # Apart from the "where" lines, the same as without rtl.
  diff <(grep fork "$BATS_TEST_TMPDIR/runs/none.out") \
    <(grep fork "$BATS_TEST_TMPDIR/runs/all.out")
}

@test "fork: a child forked while other threads make the first blocks runs to the end" {
  # The first selected block starts jemalloc (its fork handlers run from
  # the arenas', preload/place/arena.c); naming sites and backtraces call
  # into the loader and libunwind (preload/engine/loader.h). A child that
  # inherited any of their locks held would hang: RUN_LIMIT makes it a
  # failure. A backtrace on every trap, under each mechanism.
  local m modes=()
  for m in auto alias page; do
    policy "$m-bt" '[rule all]' "mechanism = $m" 'protect = read' \
      'on_write = count, backtrace, grant-rw'
    modes+=("$m-bt")
  done
  policy site-bt '[rule all]' 'site = *batch*' 'protect = read' \
    'on_write = count, backtrace, grant-rw'
  modes+=(site-bt)
  for m in none "${modes[@]}"; do
    RUN_LIMIT=120 run_mode "$m" "$PROGS/fork_first_block" threads 10
  done
  same_as_without "${modes[@]}"
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/none.out")" \
    "threads: 10 rounds of 8 forks, 0 failed"
  [[ $(report_sum auto-bt write_traps) -gt 1000 ]]
  [[ $(report_sum site-bt selected) -gt 1000 ]]
}

@test "fork: the first selected block made in the program's own fork handler" {
  for m in none all; do
    RUN_LIMIT=120 run_mode "$m" "$PROGS/fork_first_block" prepare
  done
  same_as_without all
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/none.out")" \
    "prepare: first block in the fork handler, children ok"
  [[ $(report_sum all selected) -gt 300 ]]
}

@test "jemalloc's metadata stays out of the views: one small region, one extent" {
  policy one '[rule one]' 'size = 200'
  run_mode one "$PROGS/fork_iso"
  assert_equal "$(report_sum one selected)" 1
  assert_equal "$(report_sum one extents)" 1
}

@test "plain accesses through trapping views give the same results" {
  policy small-none '[rule small]' 'size = 16..200' 'protect = none'
  policy small-read '[rule small]' 'size = 16..200' 'protect = read'
  for m in none small-none small-read; do
    run_mode "$m" "$PROGS/heap_walk"
  done
  same_as_without small-none small-read
  # 500 list nodes of 40 bytes, each written once through the view malloc
  # returned; the 200 strdup'ed words are libc's and never selected.
  [[ $(report_sum small-none write_traps) -ge 500 ]]
  [[ $(report_sum small-read write_traps) -ge 500 ]]
  [[ $(report_sum small-read libc_skipped) -ge 200 ]]
}

@test "the region API is there under LD_PRELOAD alone, and works" {
  run "$PROGS/api_dlsym"
  assert_output 'region API: not found'
  LD_PRELOAD=$PRELOAD run "$PROGS/api_dlsym"
  assert_success
  assert_output 'region API: found; traps 1, value 42'
}

@test "one rtl per process: a program linked with -lrtl sees the preload's regions" {
  run "$PROGS/api_linked"
  assert_line "malloc'd block is a region: no"
  LD_PRELOAD=$PRELOAD RTL_CONFIG=$POL/all.ini run "$PROGS/api_linked"
  assert_success
  assert_line 'region_alloc: ok'
  assert_line "malloc'd block is a region: yes"
}

@test "nothing is printed unless asked; no RTL_CONFIG selects nothing; @builtin is the built-in policy" {
  printf '[rtl]\nreport = ""\nmechanism = swizzle\n[rule all]\n' >"$POL/quiet.ini"
  RTL_CONFIG=$POL/quiet.ini LD_PRELOAD=$PRELOAD run --separate-stderr "$PROGS/fork_iso" where
  assert_success
  assert_equal "$stderr" ""
  assert_line 'block of 200: region'
  assert_equal "$(ls | grep -c json)" 0
  # Preloaded without a policy: nothing selected, nothing written.
  mkdir none && cd none
  run --separate-stderr env -u RTL_CONFIG LD_PRELOAD="$PRELOAD" "$PROGS/fork_iso" where
  assert_success
  assert_equal "$stderr" ""
  assert_line 'block of 200: not a region'
  run ls
  assert_output ""
  cd ..
  # The built-in policy selects 48..64 bytes, protects them read-only, and
  # reports by name and pid in the working directory.
  mkdir builtin && cd builtin
  run --separate-stderr env LD_PRELOAD="$PRELOAD" RTL_CONFIG=@builtin "$RTL_BUILD/examples/objects" 100 10
  assert_success
  assert_equal "$stderr" ""
  assert_output "$("$RTL_BUILD/examples/objects" 100 10)"
  # The process leaves its raw record under the report's name; rtlctl
  # report makes the report out of it when asked, by either name.
  run ls
  assert_output --regexp '^rtl-report\.objects\.[0-9]+\.raw$'
  "$rtlctl" report --json -o r.json "$(echo rtl-report.objects.*.raw | sed 's/\.raw$/.json/')"
  assert_equal "$(report_get r.json 'r["totals"]["selected"]')" 100
  assert_equal "$(report_get r.json 'r["totals"]["write_traps"]')" 100
}

@test "a bad policy is reported as FILE:LINE and selects nothing" {
  printf '[rtl]\n[rule a]\nsize = 4K..1K\n' >"$POL/bad1.ini"
  RTL_CONFIG=$POL/bad1.ini LD_PRELOAD=$PRELOAD run --separate-stderr "$PROGS/fork_iso" where
  assert_success
  assert_equal "$stderr" "$POL/bad1.ini:3: size: range '4K..1K' is empty (lower end above upper)
rtl: bad policy; nothing selected"
  assert_line 'block of 200: not a region'

  printf '# c\n[rule a]\nmechanism = swizzle\nsize = 1..\nepoch = 10ms\n' >"$POL/bad2.ini"
  RTL_CONFIG=$POL/bad2.ini LD_PRELOAD=$PRELOAD run --separate-stderr /bin/true
  assert_equal "${stderr_lines[0]}" "$POL/bad2.ini:5: epoch needs mechanism = auto, alias, page or tag: swizzle cannot re-protect pointers it does not know (rule a)"

  printf '[rtl]\nmax_regions = 10\n[rules x]\nsize = 1\n' >"$POL/bad3.ini"
  RTL_CONFIG=$POL/bad3.ini LD_PRELOAD=$PRELOAD run --separate-stderr /bin/true
  assert_equal "${stderr_lines[0]}" "$POL/bad3.ini:3: unknown section [rules x] (expected [rtl] or [rule NAME])"

  printf '[rule a]\nprotect = write\n[rule a]\n' >"$POL/bad4.ini"
  RTL_CONFIG=$POL/bad4.ini LD_PRELOAD=$PRELOAD run --separate-stderr /bin/true
  assert_equal "${stderr_lines[0]}" "$POL/bad4.ini:2: protect: 'write' is not none, read or rw"
  assert_equal "${stderr_lines[1]}" "$POL/bad4.ini:3: rule 'a' is already defined at line 1"

  RTL_CONFIG=$POL/missing.ini LD_PRELOAD=$PRELOAD run --separate-stderr /bin/true
  assert_success
  assert_equal "$stderr" "$POL/missing.ini:0: cannot open: No such file or directory
rtl: bad policy; nothing selected"
}

@test "a policy that is a FIFO or a directory is refused, never waited for" {
  mkfifo "$POL/fifo.ini"
  # Before, the constructor waited for a writer: timeout (not preloaded)
  # bounds the wait.
  run --separate-stderr timeout 60 env LD_PRELOAD="$PRELOAD" RTL_CONFIG="$POL/fifo.ini" /bin/true
  assert_success
  assert_equal "$stderr" "$POL/fifo.ini: not a regular file
rtl: bad policy; nothing selected"
  RTL_CONFIG=$POL LD_PRELOAD=$PRELOAD run --separate-stderr /bin/true
  assert_success
  assert_equal "${stderr_lines[0]}" "$POL: not a regular file"
}

@test "sample, max_regions and full views limit what is selected, nothing else" {
  policy half '[rule all]' 'sample = 2'
  policy ten 'max_regions = 10' '[rule all]'
  policy small-views '[rule all]'
  run_mode none "$PROGS/stress"
  run_mode half "$PROGS/stress"
  run_mode ten "$PROGS/stress"
  RTL_ARENA_SIZE=16M run_mode small-views "$PROGS/stress"
  same_as_without half ten small-views
  [[ $(report_sum half selected) -gt 0 ]]
  [[ $(report_sum half fallbacks) -eq 0 ]]
  [[ $(report_sum ten live) -le 10 ]]
  [[ $(report_sum ten fallbacks) -gt 0 ]]
  # 8 MB of arena in 16 MB views: the rest falls back to glibc.
  [[ $(report_sum small-views selected) -gt 0 ]]
  [[ $(report_sum small-views fallbacks) -gt 0 ]]
}

@test "free of a pointer never handed out dies of SIGABRT, as with glibc" {
  for what in middle region; do
    run "$PROGS/bad_free" "$what"
    assert_equal "$status" 134
    RTL_CONFIG=$POL/all.ini LD_PRELOAD=$PRELOAD run --separate-stderr \
      "$PROGS/bad_free" "$what"
    assert_equal "$status" 134
    assert_output ""
    [[ $stderr == "rtl: free(): invalid pointer 0x"* ]]
  done
}
