#!/usr/bin/env bats
# rtlctl's commands and their error paths: usage lines, exit codes, the
# malformed policy corpus (each error with its line), reports.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  tmp=$(mktemp -d)
}

teardown() {
  # A program a failed test left waiting (start_waiter).
  [[ -z ${waiter:-} ]] || kill -KILL "$waiter" 2>/dev/null || true
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
  for cmd in run check show report init selftest; do
    run "$rtlctl" "$cmd" --help
    assert_success
    assert_output --partial "usage: rtlctl $cmd"
  done
  run "$rtlctl" --help
  assert_success
  assert_output --partial "rtlctl check"
}

@test "unknown options give a usage line and exit 2" {
  for cmd in run check show report init selftest; do
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

@test "check: a FIFO, a directory or a file that fails to read is an error" {
  mkfifo "$tmp/fifo.ini"
  run timeout 60 "$rtlctl" check "$tmp/fifo.ini"
  assert_equal "$status" 1
  assert_line "$tmp/fifo.ini: not a regular file"
  run "$rtlctl" check "$tmp"
  assert_equal "$status" 1
  assert_line "$tmp: not a regular file"
  # A regular file whose read fails (EIO at address 0) is not an empty one.
  run "$rtlctl" check /proc/self/mem
  assert_equal "$status" 1
  assert_line --regexp '^/proc/self/mem:0: cannot read: '
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

@test "report: a crafted report cannot drive the terminal or overflow a sum" {
  run "$rtlctl" report "$top/tests/reports/crafted.json"
  assert_success
  # No control character but the line ends: escapes print as text.
  [[ $(LC_ALL=C grep -c $'[\x01-\x09\x0b-\x1f\x7f]' <<<"$output") -eq 0 ]]
  refute_output --partial $'\xc2\x9b'
  assert_line --partial 'program   evil\x1b]0;pwned\x07 (pid 1)'
  assert_line 'policy    \x0d\x1b[2Kforged'
  assert_line --regexp '^r\\u009b31m +1'
  assert_line 'note: note\x1b[H\x1b[2Jcleared'
  assert_line 'note: café stays'
  # Sums saturate: the site with 2^63-1 read traps sorts first, and the
  # epochs' diff bytes add up to 2^63-1, not to a negative number.
  [[ $(grep -m1 -A1 'site (rule)' <<<"$output" | tail -n 1) =~ ^9223372036854775807\ +1\ +1\ +1\ \ huge\\x1b\[31m\ \(r\)$ ]]
  assert_output --partial "2 epochs, 9223372036854775807 bytes in diffs vs 9223372036854775807 bytes"
}

@test "run: an argument that is not UTF-8 is escaped in the report, not dropped" {
  needs_preload
  run_policy '[rule all]'
  run "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- /bin/true $'a\xffb' $'\xc3\xa9'
  assert_success
  run python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["argv"][1:])' "$tmp/r.json"
  assert_output "['a\\\\xffb', 'é']"
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

# ---- rtlctl run: the preload, the policy, the report ----

# A policy in $tmp whose report goes to $tmp/reports.
run_policy() {
  mkdir -p "$tmp/reports"
  {
    printf '[rtl]\nreport = %s/reports/%%e.%%p.json\n' "$tmp"
    printf '%s\n' "$@"
  } >"$tmp/p.ini"
}

@test "run passes the exit status through and prints the summary and the report path" {
  needs_preload
  run_policy '[rule all]'
  # bash ends with exit(3) (dash would _exit: no report at all).
  run --separate-stderr "$rtlctl" run -c "$tmp/p.ini" -- bash -c 'echo out; exit 3'
  assert_equal "$status" 3
  assert_output out
  [[ ${stderr_lines[0]} =~ ^rtl:\ [0-9]+\ of\ [0-9]+\ allocations\ became\ regions\;\ [0-9]+\ traps ]]
  [[ ${stderr_lines[1]} == "rtl: report: $tmp/reports/bash."*".json (see: rtlctl report $tmp/reports/bash."*".json)" ]]
  assert_equal "$(ls "$tmp/reports" | wc -l)" 1
}

@test "run passes a death by signal on as the same signal, with the report" {
  needs_preload
  run_policy '[rule a]' 'size = 100'
  run "$rtlctl" run -c "$tmp/p.ini" -- "$build/tests/progs/access" 4 1 crash
  assert_equal "$status" 143 # SIGTERM, re-raised by rtlctl itself
  run python3 -c 'import glob, json, sys; r = json.load(open(glob.glob(sys.argv[1])[0])); print(r["run"]["signal"], r["totals"]["selected"])' "$tmp/reports/access.*.json"
  assert_output "15 4"
  run "$rtlctl" run -c "$tmp/p.ini" -- "$build/tests/progs/null_crash"
  assert_equal "$status" 139
}

@test "run without -c uses the built-in policy, reports in the working directory" {
  needs_preload
  cd "$tmp"
  run --separate-stderr "$rtlctl" run -- "$build/examples/objects" 300 30
  assert_success
  assert_output "$("$build/examples/objects" 300 30)"
  assert_equal "${stderr_lines[0]}" "rtl: 300 of $(python3 -c 'import glob, json; print(json.load(open(glob.glob("rtl-report.objects.*.json")[0]))["totals"]["allocations"])') allocations became regions; 300 traps (0 read, 300 write, 0 stale)"
  report=$(ls rtl-report.objects.*.json)
  assert_equal "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["policy"]["source"])' "$report")" "(built-in)"
}

@test "run: a program that cannot be run is 127 or 126" {
  needs_preload
  run -127 "$rtlctl" run -- "$tmp/no-such-program"
  assert_equal "$status" 127
  assert_output --partial "no-such-program"
  touch "$tmp/not-executable"
  run "$rtlctl" run -- "$tmp/not-executable"
  assert_equal "$status" 126
}

@test "run finds the preload through RTL_PRELOAD, else beside itself" {
  needs_preload
  RTL_PRELOAD=$build/preload/./librtlpreload.so run "$rtlctl" run -o "" -- \
    sh -c 'echo "$LD_PRELOAD"'
  assert_success
  assert_output "$build/preload/./librtlpreload.so"
  run env -u RTL_PRELOAD "$rtlctl" run -o "" -- sh -c 'echo "$LD_PRELOAD"'
  assert_output "$build/tools/../preload/librtlpreload.so"
}

@test "a report from a run has every documented field, and rtlctl report reads it" {
  needs_preload
  run_policy 'events = traps' 'mprotect = log' \
    '[rule a]' 'size = 100' 'protect = none' 'on_read = count, backtrace, grant-read' \
    'on_write = count, dirty, grant-rw' \
    '[rule b]' 'size = 200' 'mechanism = alias' 'protect = read'
  run "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- "$build/tests/progs/access" 20 5 rw
  assert_success
  run "$top/tests/reports/validate.py" "$tmp/r.json"
  assert_success
  assert_output ""
  # Every list is filled in this run, so every row's fields were checked.
  run python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print([k for k in ("rules", "sites", "top_regions", "epochs", "events", "backtraces") if not r[k]])' "$tmp/r.json"
  assert_output "[]"
  run "$rtlctl" report "$tmp/r.json"
  assert_success
  assert_line --partial "traps     45 (read 20, write 25, stale 0)"
  assert_output --regexp "a +20 +2000 +20 +20"
  assert_output --partial "dirty tracking: 1 epochs, 40 bytes in diffs"
  run "$rtlctl" report --json "$tmp/r.json"
  assert_success
  run "$top/tests/reports/validate.py" "$tmp/r.json"
  assert_success
}

@test "the validator refuses a report with a missing or mistyped field" {
  needs_preload
  run_policy '[rule all]'
  "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- true 2>/dev/null
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); del r["totals"]["trap_ns"]; r["run"]["pid"] = "x"; json.dump(r, open(sys.argv[2], "w"))' "$tmp/r.json" "$tmp/bad.json"
  run "$top/tests/reports/validate.py" "$tmp/bad.json"
  assert_failure
  assert_line --partial "totals has"
  assert_line --partial "run.pid is not int"
}

@test "selftest runs the checks once per glibc string variant and says which ran" {
  needs_preload
  # A few checks, to stay quick; the unit tests run all of them.
  run "$rtlctl" selftest sweep/memcmp shape/offset_sse2
  assert_success
  assert_output --partial "== glibc variant sse2"
  assert_output --partial "memcmp=sse2("
  assert_output --partial "ok     sweep/memcmp"
  assert_output --partial "ok     shape/offset_sse2"
  n=$(grep -c '^== glibc variant' <<<"$output")
  assert_line "selftest: $n of $n glibc variants passed"
  if grep -qw avx2 /proc/cpuinfo; then
    assert_output --partial "memcmp=avx2("
  fi
  if grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo; then
    assert_output --partial "== glibc variant evex"
  fi
}

@test "selftest fails when a check fails, and names it" {
  # A stand-in rtl-selftest whose second variant fails.
  cat >"$tmp/fake" <<'SH'
#!/bin/sh
if [ "$1" = --list-variants ]; then printf 'good\t\nbad\tglibc.cpu.x=1\n'; exit 0; fi
case "$GLIBC_TUNABLES" in *glibc.cpu.x=1*) echo "FAIL   sweep/strcpy killed"; exit 1;; esac
echo "ok     sweep/strcpy"
SH
  chmod +x "$tmp/fake"
  RTL_SELFTEST=$tmp/fake run "$rtlctl" selftest
  assert_equal "$status" 1
  assert_output --partial "FAIL   sweep/strcpy"
  assert_line "selftest: 1 of 2 glibc variants passed"
  RTL_SELFTEST=$tmp/fake run "$rtlctl" selftest --variant nosuch
  assert_equal "$status" 2
  assert_output --partial "no variant 'nosuch'"
  RTL_SELFTEST=$tmp/nothing-here run "$rtlctl" selftest
  assert_equal "$status" 1
  assert_output --partial "cannot find rtl-selftest"
}

# ---- track in the program, analyse outside it ----

@test "the preload does not link jansson; rtlctl does" {
  run readelf -d "$build/preload/librtlpreload.so"
  assert_success
  assert_output --partial "librtl.so"
  refute_output --partial "jansson"
  run readelf -d "$rtlctl"
  assert_output --partial "libjansson"
}

@test "RTL_RAW keeps the raw record: rtlctl report reads it any time later" {
  needs_preload
  run_policy '[rule a]' 'size = 100' 'protect = none' \
    'on_read = count, backtrace, grant-read' 'on_write = count, grant-rw'
  RTL_RAW=$tmp/run.raw run "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- \
    "$build/tests/progs/access" 20 5 rw
  assert_success
  assert_file_exist "$tmp/run.raw"
  # The raw record is binary and starts with its magic.
  run head -c 6 "$tmp/run.raw"
  assert_output "RTLRAW"
  # Made again from the record, the report is the one the run left.
  "$rtlctl" report --json -o "$tmp/again.json" "$tmp/run.raw"
  run cmp "$tmp/r.json" "$tmp/again.json"
  assert_success
  run "$rtlctl" report "$tmp/run.raw"
  assert_success
  assert_line --partial "traps     40 (read 20, write 20, stale 0)"
  # Sites and frames are named by rtlctl, from the module map.
  run python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["sites"][0]["site"], r["backtraces"][0]["frames"][0].split("+")[0])' "$tmp/r.json"
  assert_output "access!alloc_a access!main"
}

# The run's records wait beside RTL_RAW's file: kept by a rename, which
# cannot cross from a tmpfs TMPDIR to the disk $tmp is on.
@test "RTL_RAW on another file system than TMPDIR still keeps every record" {
  needs_preload
  [[ -d /dev/shm && -w /dev/shm ]] || skip "no /dev/shm here"
  [[ $(stat -f -c %T /dev/shm) != "$(stat -f -c %T "$tmp")" ]] ||
    skip "$tmp is on a tmpfs too"
  run_policy '[rule a]' 'size = 100' 'protect = none' \
    'on_read = count, grant-read' 'on_write = count, grant-rw'
  shm=$(mktemp -d /dev/shm/rtl-test.XXXXXX)
  # Two records: access twice (4 traps for each a[i]); dash ends with
  # _exit and leaves none.
  TMPDIR=$shm RTL_RAW=$tmp/run.raw run "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- \
    sh -c '"$1" 3 3 rw; "$1" 2 2 rw; :' sh "$build/tests/progs/access"
  assert_success
  assert_equal "$(ls -A "$shm")" ""
  rmdir "$shm"
  assert_file_exist "$tmp/run.raw"
  assert_file_exist "$tmp/run.raw.1"
  run "$rtlctl" report "$tmp/run.raw" "$tmp/run.raw.1"
  assert_success
  assert_line --partial "traps     10 (read 5, write 5, stale 0)"
}

@test "without the raw record's run, or cut short, rtlctl report says why" {
  needs_preload
  run_policy '[rule a]' 'size = 100'
  RTL_RAW=$tmp/run.raw "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- \
    "$build/tests/progs/access" 2 2 rw 2>/dev/null
  size=$(stat -c %s "$tmp/run.raw")
  head -c $((size - 3)) "$tmp/run.raw" >"$tmp/cut.raw"
  run "$rtlctl" report "$tmp/cut.raw"
  assert_equal "$status" 1
  assert_output --regexp "rtlctl report: $tmp/cut.raw: (record [0-9]+ at byte [0-9]+ runs past the end|truncated at byte [0-9]+)"
  head -c 8 "$tmp/run.raw" >"$tmp/empty.raw"
  run "$rtlctl" report "$tmp/empty.raw"
  assert_equal "$status" 1
  assert_output "rtlctl report: $tmp/empty.raw: no run record"
}

# Start `rtlctl run -- wait_signal PIDFILE` in the background; $runner is
# rtlctl's pid, $waiter the program's once it waits.
start_waiter() {
  "$rtlctl" run -c "$tmp/p.ini" -- "$build/tests/progs/wait_signal" "$tmp/pid" \
    >"$tmp/out" 2>"$tmp/err" 3>&- &
  runner=$!
  for _ in $(seq 600); do
    [[ -s $tmp/pid ]] && break
    sleep 0.1
  done
  waiter=$(cat "$tmp/pid")
}

# Whether process $1 is gone (or a zombie nobody reaped yet).
gone() {
  [[ ! -e /proc/$1 ]] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status"
}

@test "run: a signal sent to rtlctl reaches the program" {
  needs_preload
  run_policy
  start_waiter
  kill -USR1 "$runner"
  rc=0
  wait "$runner" || rc=$?
  assert_equal "$rc" 0
  assert_equal "$(cat "$tmp/out")" "got SIGUSR1"
  rm "$tmp/pid"
  start_waiter
  kill -TERM "$runner"
  rc=0
  wait "$runner" || rc=$?
  assert_equal "$rc" 143
}

@test "run: the program does not outlive rtlctl killed with SIGKILL" {
  needs_preload
  run_policy
  start_waiter
  kill -KILL "$runner"
  for _ in $(seq 300); do
    gone "$waiter" && break
    sleep 0.1
  done
  gone "$waiter"
}
