#!/usr/bin/env bats
# The report's timeline (docs/report-fields.md, "Fields"; docs/report.md): per
# rule, traps, grants, regions made and freed in each interval of the run,
# and the regions live at each interval's end, kept in at most 256
# intervals whose width doubles when the run outgrows them.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  needs_preload
  tmp=$BATS_TEST_TMPDIR
}

@test "the timeline covers the run, a series per rule summing to the rule's counts" {
  printf '%s\n' '[rule a]' 'size = 100' 'protect = none' '[rule b]' 'size = 200' \
    'protect = read' >"$tmp/p.ini"
  run "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- "$PROGS/access" 20 5 rw
  assert_success
  # validate.py: the rules' traps, grants and regions are their series' sums.
  run "$top/tests/reports/validate.py" "$tmp/r.json"
  assert_success
  assert_output ""
  run report_get "$tmp/r.json" '(
    [(e["rule"], sum(e["traps"]), sum(e["made"]), sum(e["freed"])) for e in r["timeline"]["rules"]],
    sum(e["live"][-1] for e in r["timeline"]["rules"]) == r["totals"]["live"],
    r["timeline"]["intervals"] * r["timeline"]["interval_ns"] >= r["run"]["duration_ns"] - r["timeline"]["interval_ns"],
    r["timeline"]["interval_ns"] >= 1 << 20)'
  assert_output "([('a', 40, 20, 20), ('b', 5, 5, 5)], True, True, True)"
}

@test "a run longer than 256 intervals keeps 256 at most, each wider, no count lost" {
  # The first intervals are a clock tick or 1 ms wide (2^20 ns and up):
  # 256 of them cover a second at most.
  printf '%s\n' '[rule all]' >"$tmp/p.ini"
  run "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- /usr/bin/python3 -c '
import time
end = time.monotonic() + 2.5
keep = []
while time.monotonic() < end:
    keep = [bytearray(1000) for _ in range(50)]
    time.sleep(0.002)
print("done")'
  assert_success
  assert_line done
  run "$top/tests/reports/validate.py" "$tmp/r.json"
  assert_success
  run report_get "$tmp/r.json" '(
    r["timeline"]["intervals"] <= 256,
    r["timeline"]["interval_ns"] >= 2 << 20,
    r["timeline"]["intervals"] * r["timeline"]["interval_ns"] >= r["run"]["duration_ns"] - r["timeline"]["interval_ns"],
    sum(e["live"][-1] for e in r["timeline"]["rules"]) == r["totals"]["live"],
    sum(1 for v in r["timeline"]["rules"][0]["made"] if v) > r["timeline"]["intervals"] // 2)'
  assert_output "(True, True, True, True, True)"
}

@test "a forked child's timeline starts with the regions it inherited" {
  printf '%s\n' '[rule mid]' 'size = 1000..1100' >"$tmp/p.ini"
  # Each process's own report: its raw record, made into one.
  mkdir "$tmp/rep"
  RTL_CONFIG=$tmp/p.ini RTL_REPORT=$tmp/rep/r.%p.json LD_PRELOAD=$PRELOAD \
    run /usr/bin/python3 -c '
import os, sys, time
keep = [bytearray(1000) for _ in range(1000)]
pid = os.fork()
if pid == 0:
    del keep[:500]
    time.sleep(0.05)  # the rest freed at exit, intervals later
    sys.exit(0)
os.waitpid(pid, 0)
print("parent")'
  assert_success
  reports_made "$tmp/rep"
  all=("$tmp"/rep/r.*.json)
  assert_equal "${#all[@]}" 2
  # The child is the one whose parent is the other.
  if [[ $(report_get "${all[0]}" 'r["run"]["ppid"]') == $(report_get "${all[1]}" 'r["run"]["pid"]') ]]; then
    children=("${all[0]}")
  else
    children=("${all[1]}")
  fi
  for f in "${all[@]}"; do
    run "$top/tests/reports/validate.py" "$f"
    assert_success
    # Live at the end: inherited ones too, per rule as in the totals.
    run report_get "$f" 'sum(e["live"][-1] for e in r["timeline"]["rules"]) == r["totals"]["live"]'
    assert_output True
  done
  # The child freed 500 it inherited and kept the other 500 a while: its
  # live regions count from the 1000 it started with, not from 0.
  run report_get "${children[0]}" '(sum(r["timeline"]["rules"][0]["freed"]) >= 500, max(r["timeline"]["rules"][0]["live"]) >= 500)'
  assert_output "(True, True)"
}
