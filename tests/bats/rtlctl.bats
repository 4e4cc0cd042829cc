#!/usr/bin/env bats
# rtlctl's commands and their error paths: usage lines, exit codes, the
# malformed policy corpus (each error with its line), reports.

bats_require_minimum_version 1.5.0

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load '/usr/lib/bats/bats-file/load'

setup() {
  top=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  build=${RTL_BUILD:-$top/build}
  rtlctl=$build/tools/rtlctl
  tmp=$(mktemp -d)
}

teardown() {
  rm -rf "$tmp"
}

@test "no command: usage, exit 2" {
  run "$rtlctl"
  assert_equal "$status" 2
  assert_output --partial "usage: rtlctl run"
}

@test "unknown command: message and usage, exit 2" {
  run "$rtlctl" frobnicate
  assert_equal "$status" 2
  assert_output --partial "unknown command 'frobnicate'"
  assert_output --partial "usage: rtlctl"
}

@test "every command has --help, exit 0" {
  for cmd in run check show report init; do
    run "$rtlctl" "$cmd" --help
    assert_success
    assert_output --partial "usage: rtlctl $cmd"
  done
  run "$rtlctl" --help
  assert_success
  assert_output --partial "rtlctl check"
}

@test "unknown options give a usage line and exit 2" {
  for cmd in run check show report init; do
    run "$rtlctl" "$cmd" --bogus
    assert_equal "$status" 2
    assert_output --partial "usage: rtlctl $cmd"
  done
}

@test "missing arguments give a usage line and exit 2" {
  for cmd in check show report; do
    run "$rtlctl" "$cmd"
    assert_equal "$status" 2
    assert_output --partial "usage: rtlctl $cmd"
  done
  run "$rtlctl" run
  assert_equal "$status" 2
  assert_output --partial "no program given"
}

@test "every malformed policy is rejected with its file and line" {
  n=0
  for f in "$top"/tests/policies/bad/*.ini; do
    expect=$(head -n 1 "$f" | sed 's/^# expect: //')
    run "$rtlctl" check "$f"
    [ "$status" -eq 1 ] || fail "$f: status $status, want 1"
    [[ $output == *"$f:$expect"* ]] || fail "$f: want '$f:$expect' in: $output"
    n=$((n + 1))
  done
  [ "$n" -ge 30 ]
}

@test "all errors of a file are listed, with a count" {
  run "$rtlctl" check "$top/tests/policies/bad/second-error-reported.ini"
  assert_equal "$status" 1
  assert_line --partial ":3: size: 'lots'"
  assert_line --partial ":5: protect: 'x'"
  assert_output --partial "2 errors"
}

@test "a file that cannot be read is an error, not a crash" {
  run "$rtlctl" check "$tmp/missing.ini"
  assert_equal "$status" 1
  assert_output --partial "$tmp/missing.ini:0: cannot open"
  printf '[rtl]\0\n' >"$tmp/binary.ini"
  run "$rtlctl" check "$tmp/binary.ini"
  assert_equal "$status" 1
  assert_output --partial "not a text file"
}

@test "good policies pass check" {
  for f in "$top"/tests/policies/good/*.ini; do
    run "$rtlctl" check "$f"
    assert_success
    assert_output --partial "$f: ok"
  done
}

@test "show fills in defaults and its output is a policy that shows the same" {
  run "$rtlctl" show "$top/tests/policies/good/minimal.ini"
  assert_success
  assert_line "report = rtl-report.%e.%p.json"
  assert_line "[rule all]"
  assert_line "size = 0.."
  assert_line "protect = rw"
  assert_line "on_write = count, grant-rw"
  for f in "$top"/tests/policies/good/*.ini; do
    "$rtlctl" show "$f" >"$tmp/a.ini"
    "$rtlctl" show "$tmp/a.ini" >"$tmp/b.ini"
    diff <(tail -n +2 "$tmp/a.ini") <(tail -n +2 "$tmp/b.ini")
  done
}

@test "show keeps every key of a full policy" {
  run "$rtlctl" show "$top/tests/policies/good/everything.ini"
  assert_success
  assert_line "mechanism = alias"
  assert_line "events = traps"
  assert_line "mprotect = log"
  assert_line "max_regions = 5000"
  assert_line "size = 4K..1M"
  assert_line "site = *parse*"
  assert_line "sample = 3"
  assert_line "on_read = count, backtrace, grant-read"
  assert_line "on_write = count, log, grant-rw, dirty"
  assert_line "epoch = 10ms"
  assert_line "on_write = abort"
  assert_line "size = 100..100"
}

@test "init writes a commented policy that checks, and never overwrites" {
  run "$rtlctl" init "$tmp/p.ini"
  assert_success
  assert_file_exist "$tmp/p.ini"
  grep -q '^; Rules are tried in file order' "$tmp/p.ini"
  run "$rtlctl" check "$tmp/p.ini"
  assert_success
  echo "# mine" >"$tmp/p.ini"
  run "$rtlctl" init "$tmp/p.ini"
  assert_equal "$status" 1
  assert_output --partial "File exists"
  run cat "$tmp/p.ini"
  assert_output "# mine"
  run "$rtlctl" init
  assert_success
  assert_output --partial "[rule small-objects]"
}

@test "report prints tables from a report" {
  run "$rtlctl" report "$top/tests/reports/sample.json"
  assert_success
  assert_line --partial "program   objects (pid 4242), exit 0"
  assert_line --partial "traps     1300 (read 0, write 1000, stale 300)"
  assert_output --regexp "0 +900 +900 +50400  objects!make_record \(small-objects\)"
  assert_output --partial "400 bytes in diffs vs 204800 bytes"
  assert_line "note: sample note"
}

@test "report --json prints the report back as JSON" {
  run "$rtlctl" report --json "$top/tests/reports/sample.json"
  assert_success
  echo "$output" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["totals"]["traps"] == 1300'
}

@test "malformed reports are errors with the reason" {
  for f in bad-sites bad-version truncated not-object no-run; do
    run "$rtlctl" report "$top/tests/reports/$f.json"
    assert_equal "$status" 1
    assert_output --partial "rtlctl report: $top/tests/reports/$f.json"
  done
}

@test "run with an invalid policy does not start the program" {
  run "$rtlctl" run -c "$top/tests/policies/bad/bad-range.ini" -- touch "$tmp/ran"
  assert_equal "$status" 1
  assert_output --partial "bad-range.ini:3: size"
  assert_file_not_exist "$tmp/ran"
}

@test "run without the preload library says where it looked" {
  RTL_PRELOAD=$tmp/nowhere.so run -127 "$rtlctl" run -- true
  assert_equal "$status" 127
  assert_output --partial "cannot find librtlpreload.so"
}
