#!/usr/bin/env bats
# events = traps, streamed: every trap of a run goes into its raw record
# as the run goes (preload/track/events.c), the report lists the first of
# each process, and rtlctl report --trace writes them all from the raw
# records (docs/report.md, "Formats for other tools"). The record file is
# the process's own: not a descriptor the program may close and reuse,
# and no leftover file from an image that execs.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  tmp=$BATS_TEST_TMPDIR
}

# events_policy: $tmp/e.ini, every block of 64 bytes read-only again each
# millisecond, its traps recorded.
events_policy() {
  needs_preload
  printf '%s\n' '[rtl]' 'events = traps' 'mechanism = alias' '[rule a]' 'size = 64' \
    'protect = read' 'on_write = count, grant-rw' 'epoch = 1ms' >"$tmp/e.ini"
}

@test "events stream: every trap of a long run in the raw record and the trace, the report lists the first" {
  events_policy
  # 4000 blocks written in 40 rounds, epochs between rounds: about 140,000
  # traps (not every block is protected again each round), past the
  # report's 16384 and past flushes of the ring (one per 32768).
  local args=(4000 40 5000)
  RTL_RAW=$tmp/e.raw run "$rtlctl" run -c "$tmp/e.ini" -o "$tmp/e.json" -- \
    "$build/tests/progs/epoch_blocks" "${args[@]}"
  assert_success
  assert_line "$("$build/tests/progs/epoch_blocks" "${args[@]}")"
  "$rtlctl" report --trace "$tmp/t.json" "$tmp/e.raw"
  run python3 - "$tmp/e.json" "$tmp/t.json" "$tmp/e.raw" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))["traceEvents"]
traps = [e for e in t if e.get("cat") == "trap"]
t = r["totals"]
n = t["read_traps"] + t["write_traps"]  # a stale trap is no event
assert n > 3 * 16384, n
# Every trap, none lost; the report's list is the trace's first traps.
assert len(traps) == n, (len(traps), n)
assert len(r["events"]) == 16384, len(r["events"])
for e, x in zip(r["events"], traps):
    assert (x["name"], x["args"]["site"], x["args"]["offset"], x["tid"]) == \
        (e["kind"] + " trap", e["site"], e["offset"], e["tid"]), (e, x)
assert all(a["ts"] <= b["ts"] for a, b in zip(traps, traps[1:]))
notes = [s for s in r["notes"] if s.startswith("events:")]
assert notes == ["events: %d traps recorded, the first 16384 listed here; "
                 "rtlctl report --trace OUT RAW-RECORD... writes them all" % n], notes
# 24 bytes a trap, and less than 64 KiB of the rest.
size = os.path.getsize(sys.argv[3])
assert 24 * n <= size < 24 * n + 65536, (size, n)
print("ok")
PY
  assert_output ok
  # The format holds, the report's own events against the trace's first.
  run python3 "$top/tests/reports/validate_trace.py" "$tmp/t.json" "$tmp/e.json"
  assert_success
}

@test "events stream: a forked child's traps go to its own record, none to its parent's" {
  needs_preload
  printf '%s\n' '[rtl]' 'events = traps' '[rule all]' 'size = 64' 'protect = read' \
    'on_write = count, grant-rw' 'epoch = 1ms' 'mechanism = alias' >"$tmp/f.ini"
  # live_blocks: a parent and two forked children, each writing its blocks.
  RTL_RAW=$tmp/f.raw run "$rtlctl" run -c "$tmp/f.ini" -o "$tmp/f.json" -- \
    "$build/tests/progs/live_blocks" 3000 64 random 2
  assert_success
  ls "$tmp"/f.raw* >"$tmp/raws"
  assert_equal "$(wc -l <"$tmp/raws")" 3
  "$rtlctl" report --trace "$tmp/t.json" $(cat "$tmp/raws")
  local i=0 raw
  while read -r raw; do
    "$rtlctl" report -o "$tmp/one.$((i++)).json" "$raw"
  done <"$tmp/raws"
  run python3 - "$tmp/t.json" "$tmp"/one.*.json <<'PY'
import collections, json, sys
t = json.load(open(sys.argv[1]))["traceEvents"]
per = collections.Counter(e["pid"] for e in t if e.get("cat") == "trap")
want = {}
for f in sys.argv[2:]:
    r = json.load(open(f))
    want[r["run"]["pid"]] = r["totals"]["read_traps"] + r["totals"]["write_traps"]
assert dict(per) == want, (per, want)
assert len(want) == 3 and all(want.values()), want
print("ok")
PY
  assert_output ok
}

@test "events stream: a program that closes every descriptor keeps its files, the record its traps" {
  events_policy
  # After half its rounds the program closes every descriptor above 2 and
  # opens its own file 32 times, one on the number the record file had:
  # nothing of rtl's may reach it. The record is then written to a new
  # file, its events from before counted as lost.
  run "$rtlctl" run -c "$tmp/e.ini" -o "$tmp/c.json" -- \
    "$build/tests/progs/events_fds" 8000 40 5000 close "$tmp/own.txt"
  assert_success
  assert_line "$("$build/tests/progs/events_fds" 8000 40 5000 close "$tmp/plain.txt")"
  run grep -c -v -E '^round [0-9]+ fd [0-9]+$' "$tmp/own.txt"
  assert_output 0
  # Rounds 20 to 39, a line per descriptor each.
  assert_equal "$(wc -l <"$tmp/own.txt")" $((20 * 32))
  run python3 - "$tmp/c.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["totals"]["traps"]
# Its traps before the close filled the ring at least once: written to
# the file it lost, counted.
lost = [s for s in r["notes"] if "traps not recorded" in s]
assert n > 32768 and len(lost) == 1, (n, r["notes"])
print("ok")
PY
  assert_output ok
}

@test "events stream: an image that execs, or a process that ends with _exit, leaves no file behind" {
  needs_preload
  mkdir "$tmp/out"
  printf '%s\n' '[rtl]' 'events = traps' "report = $tmp/out/%e.%p.json" 'mechanism = alias' \
    '[rule a]' 'size = 64' 'protect = read' 'on_write = count, grant-rw' 'epoch = 1ms' \
    >"$tmp/e.ini"
  # 4000 blocks for 40 rounds, the exec after 20: past a flush of the ring.
  RTL_CONFIG=$tmp/e.ini LD_PRELOAD=$PRELOAD run "$build/tests/progs/events_fds" 4000 40 5000 exec
  assert_success
  # true's record only: nothing of the image that exec'd, no file left
  # half written.
  run ls -A "$tmp/out"
  assert_success
  [[ $(wc -l <<<"$output") -eq 1 && $output == true.*.raw ]] || fail "$output"
  # The file is opened at start with no name: dash, which ends with _exit
  # (no record), leaves nothing either; cat, its child, its record.
  rm -f "$tmp"/out/*
  RTL_CONFIG=$tmp/e.ini LD_PRELOAD=$PRELOAD run dash -c 'echo a | cat'
  assert_success
  run ls -A "$tmp/out"
  [[ $output == cat.*.raw ]] || fail "$output"
}

@test "events stream: flushes from a handler on an alternate signal stack in a routed block (ruby's)" {
  needs_preload
  # ruby keeps a 16 KiB alternate signal stack in a malloc'd block, which
  # a rule without a size selects, and rtl's handler runs there. The
  # flush's writev took its iovec from that stack, a pointer into rtl's
  # memory that the system-call interposition checked first (a SIGSYS
  # inside the handler), and ruby died of SIGSEGV at its first flush. The
  # file is opened at start now, and a flush's system calls point at
  # nothing on the stack.
  printf '%s\n' '[rtl]' 'events = traps' 'mechanism = alias' '[rule all]' 'protect = read' \
    'on_write = count, grant-rw' 'epoch = 1ms' >"$tmp/all.ini"
  local args=(4000 40 5000 16384)
  run "$rtlctl" run -c "$tmp/all.ini" -o "$tmp/s.json" -- "$build/tests/progs/epoch_blocks" "${args[@]}"
  assert_success
  assert_line "$("$build/tests/progs/epoch_blocks" "${args[@]}")"
  run python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
t = r["totals"]
print(t["read_traps"] + t["write_traps"] > 32768, [n for n in r["notes"] if "not recorded" in n])' "$tmp/s.json"
  assert_output "True []"
}
