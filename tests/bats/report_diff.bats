#!/usr/bin/env bats
# rtlctl report --diff A B (docs/report.md, "Two runs"): per rule and site,
# traps, regions, bytes and time in traps in A, in B and the change, the
# largest change first; as tables, --json and (report_html.bats) --html.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  tmp=$BATS_TEST_TMPDIR
}

# runs: the access program under policy a (rule a) and under b (rule a
# and one more, b, whose blocks trap on read): $tmp/a.json, $tmp/b.json.
runs() {
  needs_preload
  printf '%s\n' '[rule a]' 'size = 100' 'protect = none' >"$tmp/a.ini"
  cat "$tmp/a.ini" - >"$tmp/b.ini" <<<$'[rule b]\nsize = 200\nprotect = none'
  for p in a b; do
    run "$rtlctl" run -c "$tmp/$p.ini" -o "$tmp/$p.json" -- "$PROGS/access" 20 5 rw
    assert_success
  done
}

# diff_json A B: rtlctl report --diff --json of A and B into $tmp/d.json.
diff_json() {
  run "$rtlctl" report --diff --json "$1" "$2"
  assert_success
  printf '%s\n' "$output" >"$tmp/d.json"
}

@test "--diff of a run against itself: no change in any rule or site" {
  runs
  run "$rtlctl" report --diff "$tmp/a.json" "$tmp/a.json"
  assert_success
  assert_line "no change: every rule and site has the same traps, regions, bytes and time in traps in A and B"
  refute_output --regexp ' [+-][1-9][0-9]* '
  diff_json "$tmp/a.json" "$tmp/a.json"
  run python3 - "$tmp/d.json" "$tmp/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
assert d["rtl_diff"] == 1 and d["same"] is True, d["same"]
rows = [d["totals"]] + d["rules"] + d["sites"]
assert all(v == 0 for x in rows for v in x["change"].values()), rows
assert [x["rule"] for x in d["rules"]] == [x["name"] for x in r["rules"]]
assert len(d["sites"]) == len(r["sites"])
print("ok")
PY
  assert_output ok
}

@test "--diff against a run with one more rule: that rule's traps, first" {
  runs
  diff_json "$tmp/a.json" "$tmp/b.json"
  run python3 - "$tmp/d.json" "$tmp/b.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
[rb] = [x for x in b["rules"] if x["name"] == "b"]
traps = rb["read_traps"] + rb["write_traps"]
assert traps > 0, rb
first = d["rules"][0]
assert first["rule"] == "b", d["rules"]
assert first["a"] == {"traps": 0, "regions": 0, "bytes": 0, "trap_ns": 0}, first
assert (first["b"]["traps"], first["change"]["traps"]) == (traps, traps), first
assert (first["b"]["regions"], first["b"]["bytes"]) == (rb["selected"], rb["bytes"]), first
assert d["rules"][1]["rule"] == "a" and d["rules"][1]["change"]["traps"] == 0, d["rules"]
assert d["sites"][0]["site"] == "access!alloc_b" and d["sites"][0]["change"]["traps"] == traps
assert d["same"] is False
print(traps)
PY
  traps=$output
  [[ $traps -gt 0 ]]
  run "$rtlctl" report --diff "$tmp/a.json" "$tmp/b.json"
  assert_success
  refute_line --partial "no change"
  # The first row under "rules": 0 traps in A, all of b's in B.
  row=$(grep -A2 '^rules, largest change first$' <<<"$output" | tail -n 1)
  [[ $row =~ ^\ +0\ +$traps\ +\+$traps\ .*\ \ b$ ]] || fail "first rule row: $row"
  row=$(grep -A2 '^sites, largest change first$' <<<"$output" | tail -n 1)
  [[ $row == *"  access!alloc_b (b)" ]] || fail "first site row: $row"
}

@test "--diff takes two reports (or raw records), and prints tables, --json or --html only" {
  sample=$top/tests/reports/sample.json
  run --separate-stderr "$rtlctl" report --diff "$sample"
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl report: --diff takes two reports, A and B (1 given)"
  run --separate-stderr "$rtlctl" report --diff --csv sites "$sample" "$sample"
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl report: --diff prints tables, --json or --html OUT"
  run --separate-stderr "$rtlctl" report --diff "$sample" "$tmp/missing.json"
  assert_equal "$status" 1
  assert_equal "$stderr" "rtlctl report: $tmp/missing.json: cannot open: No such file or directory"
  run "$rtlctl" report --diff "$sample" "$sample"
  assert_success
  assert_line --partial "no change"
}
