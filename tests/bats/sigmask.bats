#!/usr/bin/env bats
# Region traps whatever signals the program blocks (issue 20): each mode
# of tests/progs/sigmask blocks SIGSEGV one way, writes to a block that is
# a read-only region under the policy, and prints its own view of its
# mask. With the preload, the output and the exit status are those of the
# run without it, and the write trapped (docs/signals.md, "Signal masks").

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
  policy read100 '[rule b]' 'size = 100' 'protect = read'
}

# same_run MODE: tests/progs/sigmask MODE with and without the preload.
same_run() {
  run_mode none "$PROGS/sigmask" "$1"
  run_mode read100 "$PROGS/sigmask" "$1"
  same_as_without read100
}

@test "SIGSEGV blocked with sigprocmask, or every signal: traps work, the mask reads back" {
  for m in block fill; do
    rm -f "$REP"/read100/*
    same_run "$m"
    [[ $(report_sum read100 write_traps) -eq 1 ]]
  done
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "main: SIGSEGV blocked, 29 of 31 blocked"
}

@test "threads made after sigfillset + pthread_sigmask, or with a full mask in their attributes" {
  for m in thread attr; do
    rm -f "$REP"/read100/*
    same_run "$m"
    [[ $(report_sum read100 write_traps) -eq 1 ]]
  done
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "thread: SIGSEGV blocked, 29 of 31 blocked"
}

@test "a handler whose sa_mask is full, and one sigsuspend runs with every other signal blocked" {
  for m in handler suspend; do
    rm -f "$REP"/read100/*
    same_run "$m"
    [[ $(report_sum read100 write_traps) -eq 1 ]]
  done
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "handler: SIGSEGV blocked, 29 of 31 blocked"
}

@test "signalfd with every signal blocked still reads its signal" {
  same_run signalfd
  [[ $(report_sum read100 write_traps) -eq 1 ]]
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "signalfd: signal 10"
}

@test "a SIGSEGV sent while blocked waits until it is unblocked, with its siginfo" {
  same_run sent
  [[ $(report_sum read100 write_traps) -eq 1 ]]
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_output "main: SIGSEGV pending
main: wrote 99 bytes
main: unblocking
SIGSEGV handler: signal 11, code -6, from this process
main: SIGSEGV not pending
main: SIGSEGV unblocked, 0 of 31 blocked"
}

@test "a fault that is not rtl's with SIGSEGV blocked kills, as the kernel does, handler or not" {
  run_mode none "$PROGS/sigmask" fault
  run_mode read100 "$PROGS/sigmask" fault
  # stderr holds the shell's word on the death, with its line number.
  cmp "$BATS_TEST_TMPDIR/runs/none.out" "$BATS_TEST_TMPDIR/runs/read100.out"
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/none.rc")" 139
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/read100.rc")" 139
  [[ $(report_get "$(ls "$REP"/read100/*.json)" 'r["run"]["signal"]') -eq 11 ]]
}

@test "a handler left by siglongjmp leaves the mask sigsetjmp saved; fork keeps the child's view" {
  for m in jump fork; do
    same_run "$m"
  done
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "child: wrote 99 bytes"
}

@test "a program exec'd or spawned while SIGSEGV is blocked starts with it blocked, and traps" {
  for m in exec spawn; do
    rm -f "$REP"/read100/*
    same_run "$m"
    [[ $(report_sum read100 write_traps) -ge 1 ]]
  done
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "started: SIGSEGV blocked, 1 of 31 blocked"
  assert_line "parent: SIGSEGV blocked, 1 of 31 blocked"
}
