#!/usr/bin/env bats
# The report of one `rtlctl run`: every process of the run leaves its raw
# record in the run's folder, and rtlctl makes one report of them all when
# the program ends, a row per process in "processes", nothing of another
# run's (docs/policy.md, "Report").

bats_require_minimum_version 1.5.0
load helpers

setup() {
  tmp=$BATS_TEST_TMPDIR
  # The run's folder of records goes here: the test sees it removed.
  export TMPDIR=$tmp/t
  mkdir -p "$TMPDIR"
}

# A policy in $tmp whose report goes to $tmp/reports.
run_policy() {
  mkdir -p "$tmp/reports"
  {
    printf '[rtl]\nreport = %s/reports/%%e.%%p.json\n' "$tmp"
    printf '%s\n' "$@"
  } >"$tmp/p.ini"
}

# jq-like: a Python expression over the report r in FILE.
get() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

@test "run -o: every process of a many-process script in one report, a row each" {
  needs_preload
  run_policy '[rule all]'
  run --separate-stderr "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/c.json" -- \
    bash -c "for i in 1 2 3; do $build/examples/objects 50 5 >/dev/null; done; /bin/true; true"
  assert_success
  assert_file_exist "$tmp/c.json"
  python3 "$top/tests/reports/validate.py" "$tmp/c.json"
  assert_equal "$(get "$tmp/c.json" 'r["run"]["program"]')" bash
  # bash, three objects and true: five processes, each a row, the
  # totals their sums; each objects selected its 55 blocks.
  assert_equal "$(get "$tmp/c.json" 'sorted(p["program"] for p in r["processes"])')" \
    "['bash', 'objects', 'objects', 'objects', 'true']"
  assert_equal "$(get "$tmp/c.json" 'r["totals"]["selected"] == sum(p["selected"] for p in r["processes"])')" True
  assert_equal "$(get "$tmp/c.json" '[p["selected"] >= 55 for p in r["processes"] if p["program"] == "objects"]')" \
    "[True, True, True]"
  assert_equal "$(get "$tmp/c.json" 'r["totals"]["traps"] == sum(p["traps"] for p in r["processes"])')" True
  # One report, named once; the records and their folder are gone, and
  # nothing was written where the policy's template points.
  [[ $(grep -c '^rtl: report: ' <<<"$stderr") == 1 ]]
  [[ $stderr == *"rtl: 5 processes"* ]]
  [[ $stderr == *"rtl: report: $tmp/c.json (see: rtlctl report $tmp/c.json)"* ]]
  assert_equal "$(ls "$tmp" | grep -c '^c\.')" 1
  assert_equal "$(ls "$TMPDIR" | wc -l)" 0
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
  # bash itself ran under rtl, and so did its forked subshell: theirs are
  # the two processes of the report.
  grep -q '^LD_PRELOAD=.*librtlpreload.so' "$tmp/env.bash" || fail "bash did not start under rtl"
  grep -q '^RTL_CONFIG=' "$tmp/env.bash" || fail "bash had no RTL_CONFIG"
  assert_file_exist "$tmp/c.json"
  assert_equal "$(get "$tmp/c.json" '[p["program"] for p in r["processes"]]')" "['bash', 'bash']"
  # cat, exec'd: neither the preload nor its variables, the user's
  # LD_PRELOAD kept; only the seccomp filter's signature, which the
  # kernel's filter goes with.
  assert_equal "$(grep -c 'librtlpreload' "$tmp/env.cat")" 0
  assert_equal "$(grep '^LD_PRELOAD=' "$tmp/env.cat")" "LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6"
  assert_equal "$(grep '^RTL_' "$tmp/env.cat" | grep -vc '^RTL_SECCOMP=')" 0
  # Without the option, cat is a process of the run too.
  run --separate-stderr "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/d.json" -- \
    bash -c "cat /proc/self/environ >/dev/null; true"
  assert_success
  assert_equal "$(get "$tmp/d.json" 'sorted(p["program"] for p in r["processes"])')" "['bash', 'cat']"
}

@test "run: a relative -o is the folder rtlctl started in, wherever the program goes" {
  needs_preload
  run_policy '[rule all]'
  cd "$tmp"
  run --separate-stderr "$rtlctl" run -c "$tmp/p.ini" -o r -- bash -c 'cd /; /bin/true; true'
  assert_success
  assert_file_exist "$tmp/r"
  assert_equal "$(get "$tmp/r" 'len(r["processes"])')" 2
}

@test "run: two runs at once each report their own processes" {
  needs_preload
  run_policy '[rule all]'
  "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/a.json" -- bash -c 'sleep 0.3; /bin/true; true' 2>/dev/null &
  "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/b.json" -- bash -c '/bin/true; sleep 0.3; /bin/true; /bin/true; true' 2>/dev/null
  wait
  assert_equal "$(get "$tmp/a.json" 'sorted(p["program"] for p in r["processes"])')" "['bash', 'sleep', 'true']"
  assert_equal "$(get "$tmp/b.json" 'sorted(p["program"] for p in r["processes"])')" "['bash', 'sleep', 'true', 'true', 'true']"
}

@test "run: a program that ends with _exit is named in a note; its children's data is there" {
  needs_preload
  run_policy '[rule all]'
  # dash ends with _exit: no record of its own.
  run --separate-stderr "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/c.json" -- \
    dash -c "$build/examples/objects 50 5 >/dev/null; exit 3"
  assert_failure 3
  assert_equal "$(get "$tmp/c.json" '[p["program"] for p in r["processes"]]')" "['objects']"
  assert_equal "$(get "$tmp/c.json" 'any("left no record" in n for n in r["notes"])')" True
}

@test "every process under an epoch leaves its record, whatever it made of its environment" {
  needs_preload
  # bash keeps its environment in blocks rtl protects. A report made at
  # exit once read those strings through rtl's locks, which the epoch
  # thread could be holding (it hung till a 60 s timeout, in about one run
  # of six); a process now only writes its record, and rtlctl reads it.
  run_policy 'mechanism = auto' '[rule all]' 'protect = read' \
    'on_write = count, dirty, grant-rw' 'epoch = 2ms'
  for i in $(seq 30); do
    RTL_CONFIG=$tmp/p.ini LD_PRELOAD=$build/preload/librtlpreload.so RTL_RAW=$tmp/raw.$i \
      timeout 5 bash -c 'echo hi' >/dev/null 2>"$tmp/err.$i" || true
    run cat "$tmp/err.$i"
    assert_output ""
    "$rtlctl" report --json -o "$tmp/r.$i.json" "$tmp/raw.$i"
  done
  python3 "$top/tests/reports/validate.py" "$tmp"/r.*.json
  assert_equal "$(ls "$tmp"/r.*.json | wc -l)" 30
}
