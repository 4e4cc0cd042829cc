#!/usr/bin/env bats
# The reports one `rtlctl run` leaves: the program's under the name asked
# for, each child's with its pid before the extension, all of them listed
# when the program ends, none of another run's (docs/policy.md, "Report").

bats_require_minimum_version 1.5.0
load helpers

setup() {
  tmp=$BATS_TEST_TMPDIR
}

# A policy in $tmp whose report goes to $tmp/reports.
run_policy() {
  mkdir -p "$tmp/reports"
  {
    printf '[rtl]\nreport = %s/reports/%%e.%%p.json\n' "$tmp"
    printf '%s\n' "$@"
  } >"$tmp/p.ini"
}

@test "run -o: children's reports keep the extension and are all listed" {
  needs_preload
  run_policy '[rule all]'
  run --separate-stderr "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/c.json" -- \
    bash -c "$build/examples/objects 50 5 >/dev/null; /bin/true; true"
  assert_success
  assert_file_exist "$tmp/c.json"
  assert_equal "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["program"])' "$tmp/c.json")" bash
  # bash's two children: c.PID.json each, PID the one inside.
  children=$(cd "$tmp" && ls | grep -E '^c\.[0-9]+\.json$')
  assert_equal "$(wc -l <<<"$children")" 2
  for f in $children; do
    pid=${f#c.}
    pid=${pid%.json}
    assert_equal "$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["run"]; print(r["pid"], r["root_pid"])' "$tmp/$f")" \
      "$pid $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["pid"])' "$tmp/c.json")"
    # The summary names each of them, with its program.
    grep -qxE "rtl: report: $tmp/$f \((objects|true), pid $pid\)" <<<"$stderr" || fail "$f not listed in: $stderr"
  done
  assert_equal "$(grep -c '^rtl: report: ' <<<"$stderr")" 3
  [[ ${stderr_lines[1]} == "rtl: report: $tmp/c.json (see: rtlctl report $tmp/c.json)" ]]
  assert_equal "$(ls "$tmp/reports" 2>/dev/null | wc -l)" 0
}

@test "run --no-children: exec'd programs run without rtl, a forked one keeps it" {
  needs_preload
  run_policy '[rule all]'
  # bash defines its own getenv and setenv: the preload must edit environ
  # itself. bash's environment and its child's as the kernel got them,
  # and the LD_PRELOAD the grandchild sees.
  LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6 run --separate-stderr "$rtlctl" run --no-children \
    -c "$tmp/p.ini" -o "$tmp/c.json" -- bash -c \
    "cat /proc/\$\$/environ | tr '\\0' '\\n' >$tmp/env.bash; cat /proc/self/environ | tr '\\0' '\\n' >$tmp/env.cat
     sh -c 'echo \"[\$LD_PRELOAD]\"'; (: forked, no exec); true"
  assert_success
  assert_equal "$output" "[/lib/x86_64-linux-gnu/libc.so.6]"
  # bash itself ran under rtl, and so did its forked subshell: their two
  # reports are all there are.
  grep -q '^LD_PRELOAD=.*librtlpreload.so' "$tmp/env.bash" || fail "bash did not start under rtl"
  grep -q '^RTL_CONFIG=' "$tmp/env.bash" || fail "bash had no RTL_CONFIG"
  assert_file_exist "$tmp/c.json"
  child=$(cd "$tmp" && ls | grep -E '^c\.[0-9]+\.json$')
  assert_equal "$(wc -w <<<"$child")" 1
  assert_equal "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["program"])' "$tmp/$child")" bash
  assert_equal "$(grep -c '^rtl: report: ' <<<"$stderr")" 2
  # cat, exec'd: neither the preload nor its variables, the user's
  # LD_PRELOAD kept; only the seccomp filter's signature, which the
  # kernel's filter goes with.
  assert_equal "$(grep -c 'librtlpreload' "$tmp/env.cat")" 0
  assert_equal "$(grep '^LD_PRELOAD=' "$tmp/env.cat")" "LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6"
  assert_equal "$(grep '^RTL_' "$tmp/env.cat" | grep -vc '^RTL_SECCOMP=')" 0
  # Without the option, the same children write their reports.
  run --separate-stderr "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/d.json" -- \
    bash -c "cat /proc/self/environ >/dev/null; true"
  assert_success
  assert_equal "$(cd "$tmp" && ls | grep -cE '^d\.[0-9]+\.json$')" 1
}

@test "run: a relative -o is the folder rtlctl started in, wherever the program goes" {
  needs_preload
  run_policy '[rule all]'
  cd "$tmp"
  run --separate-stderr "$rtlctl" run -c "$tmp/p.ini" -o r -- bash -c 'cd /; /bin/true; true'
  assert_success
  assert_file_exist "$tmp/r"
  run ls "$tmp"
  assert_line --regexp '^r\.[0-9]+$'
}

@test "run: another run's reports in the same folder are not listed" {
  needs_preload
  run_policy '[rule all]'
  "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/c.json" -- bash -c '/bin/true; true' 2>/dev/null
  mv "$tmp/c.json" "$tmp/first.json"
  run --separate-stderr "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/c.json" -- /bin/true
  assert_success
  assert_equal "$(grep -c '^rtl: report: ' <<<"$stderr")" 1
}

@test "every report is made under an epoch, whatever the program made of its environment" {
  needs_preload
  # bash keeps its environment in blocks rtl protects; the report is made
  # by a _Fork child that once read those strings (and handed them to
  # execve) through rtl's locks, which the epoch thread could be holding
  # as the child was made: it hung till the 60 s timeout, here in about
  # one run of six. It now hands rtlctl the environment the program
  # started with.
  run_policy 'mechanism = auto' '[rule all]' 'protect = read' \
    'on_write = count, dirty, grant-rw' 'epoch = 2ms'
  for i in $(seq 30); do
    RTL_CONFIG=$tmp/p.ini LD_PRELOAD=$build/preload/librtlpreload.so RTL_RAW=$tmp/raw.$i \
      timeout 5 bash -c 'echo hi' >/dev/null 2>"$tmp/err.$i" || true
    run cat "$tmp/err.$i"
    assert_output ""
  done
  assert_equal "$(ls "$tmp/reports"/bash.*.json | wc -l)" 30
}
