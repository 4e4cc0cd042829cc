# What every bats suite shares (tests/bats/*.bats and tests/programs/ load
# it first): the bats libraries, the tree's paths, the skips that depend on
# how the suite runs, and the preload's comparisons of one command run
# without and with it.

BATS_LIB=${BATS_LIB:-/usr/lib/bats}
load "$BATS_LIB/bats-support/load"
load "$BATS_LIB/bats-assert/load"
load "$BATS_LIB/bats-file/load"

# The tree and the build under test (tests/run.sh sets RTL_BUILD; a suite
# run by hand tests build/).
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${RTL_BUILD:-$top/build}
export RTL_BUILD=$build
rtlctl=$build/tools/rtlctl
PRELOAD=$build/preload/librtlpreload.so
PROGS=$build/tests/progs

# The preload cannot run in a sanitizer build (scripts/check-sanitize.sh):
# its tests skip there.
needs_preload() {
  [[ -z ${RTL_SANITIZE_CFLAGS:-} ]] || skip "the preload does not run under sanitizers"
}

# A test that runs this machine's own programs (an installed tree, dpkg,
# rtlctl's children) where the build is another machine's (make
# test-aarch64 runs the built programs under qemu-user: RTL_RUN).
needs_native() {
  [[ -z ${RTL_RUN:-} ]] || skip "${1:-built for another machine (qemu-user)}"
}

preload_setup() {
  needs_preload
  assert_file_exist "$PRELOAD"
  # Without RTL_CONFIG the preload runs the built-in policy, whose report
  # goes to the working directory: keep it out of the source tree.
  cd "$BATS_TEST_TMPDIR"
  POL=$BATS_TEST_TMPDIR/policies
  REP=$BATS_TEST_TMPDIR/reports
  mkdir -p "$POL" "$REP"/{nothing,all,range}
  # The three policies of every comparison; reports by program and pid.
  # "all" and "range" route through the swizzle mechanism, whose blocks
  # are rtl regions (region_find answers for them); auto's are tested
  # under policies that say so, and by tests/programs.
  printf '[rtl]\nreport = %s/nothing/%%e.%%p.json\n' "$REP" >"$POL/nothing.ini"
  printf '[rtl]\nreport = %s/all/%%e.%%p.json\nmechanism = swizzle\n[rule all]\n' \
    "$REP" >"$POL/all.ini"
  printf '[rtl]\nreport = %s/range/%%e.%%p.json\nmechanism = swizzle\n[rule mid]\nsize = 64..4K\nprotect = rw\n' \
    "$REP" >"$POL/range.ini"
}

# policy NAME LINES...: write $POL/NAME.ini, its report in $REP/NAME/.
policy() {
  local name=$1
  shift
  mkdir -p "$REP/$name"
  {
    printf '[rtl]\nreport = %s/%s/%%e.%%p.json\n' "$REP" "$name"
    printf '%s\n' "$@"
  } >"$POL/$name.ini"
}

# run_mode MODE CMD...: run CMD in a fresh $BATS_TEST_TMPDIR/work, without
# the preload (MODE "none") or under policy MODE; keep stdout, stderr and
# the exit status in $BATS_TEST_TMPDIR/runs/MODE.{out,err,rc}. A run that
# has not ended after RUN_LIMIT seconds (300) is killed (status 137): a
# hang fails its test, not the whole suite's time.
run_mode() {
  local mode=$1 runs=$BATS_TEST_TMPDIR/runs rc=0 limit=${RUN_LIMIT:-300}
  shift
  mkdir -p "$runs"
  rm -rf "$BATS_TEST_TMPDIR/work"
  mkdir "$BATS_TEST_TMPDIR/work"
  if [[ $mode == none ]]; then
    (cd "$BATS_TEST_TMPDIR/work" && timeout -s KILL "$limit" "$@") \
      >"$runs/$mode.out" 2>"$runs/$mode.err" || rc=$?
  else
    (cd "$BATS_TEST_TMPDIR/work" && timeout -s KILL "$limit" \
      env LD_PRELOAD="$PRELOAD" RTL_CONFIG="$POL/$mode.ini" "$@") \
      >"$runs/$mode.out" 2>"$runs/$mode.err" || rc=$?
  fi
  echo "$rc" >"$runs/$mode.rc"
  [[ $mode == none || ! -d $REP/$mode ]] || reports_made "$REP/$mode"
}

# reports_made DIR: the JSON report of each raw record the processes left
# in DIR (a preloaded process records; rtlctl report analyses), beside it:
# NAME.raw -> NAME.json.
reports_made() {
  local f
  for f in "$1"/*.raw "$1"/*.raw.[0-9]*; do
    [[ -e $f && ! -e ${f/.raw/.json} ]] || continue
    "$rtlctl" report --json -o "${f/.raw/.json}" "$f" || return 1
  done
}

# same_as_without MODE...: each mode's stdout, stderr and exit status are
# byte-identical to the run without the preload.
same_as_without() {
  local runs=$BATS_TEST_TMPDIR/runs m f
  for m in "$@"; do
    for f in out err rc; do
      if ! cmp -s "$runs/none.$f" "$runs/$m.$f"; then
        echo "mode $m: $f differs from the run without the preload:" >&2
        diff <(head -c 2000 "$runs/none.$f") <(head -c 2000 "$runs/$m.$f") >&2 || true
        # A hang (137: killed at the limit) or a crash reads as lost output.
        [[ $f == rc ]] || echo "exit status: $(<"$runs/none.rc") without, $(<"$runs/$m.rc") with" >&2
        return 1
      fi
    done
  done
}

# compare_runs CMD...: without the preload, then selecting nothing,
# everything, and 64..4K; all four identical, and the selecting runs did
# select (their reports say so).
compare_runs() {
  local m
  for m in none nothing all range; do
    run_mode "$m" "$@"
  done
  same_as_without nothing all range
  [[ $(report_sum nothing selected) -eq 0 ]]
  [[ $(report_sum all selected) -gt 0 ]]
  [[ $(report_sum range selected) -gt 0 ]]
}

# report_sum MODE FIELD: totals.FIELD summed over the reports of MODE's
# processes (docs/policy.md, "Report").
report_sum() {
  reports_made "$REP/$1"
  python3 - "$REP/$1" "$2" <<'PY'
import glob, json, sys
n = 0
for f in glob.glob(sys.argv[1] + "/*.json*"):
    with open(f) as fh:
        n += json.load(fh)["totals"][sys.argv[2]]
print(n)
PY
}

# rep MODE EXPR: a Python expression over the report of every process that
# ran under MODE (their raw records in $REP/MODE, made into one).
rep() {
  "$rtlctl" report --json "$REP/$1"/*.raw >"$BATS_TEST_TMPDIR/rep.json" || return 1
  report_get "$BATS_TEST_TMPDIR/rep.json" "$2"
}

# report_get FILE EXPR: a Python expression over the report r, printed.
report_get() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# report_count MODE: how many processes wrote a report under MODE.
report_count() {
  local f n=0
  reports_made "$REP/$1"
  for f in "$REP/$1"/*.json*; do
    [[ -e $f ]] && n=$((n + 1))
  done
  echo "$n"
}
