#!/usr/bin/env bats
# rtlctl report's formats for other tools, checked by reading them back:
# --csv sites|rules with Python's csv module against the report's JSON,
# --folded (collapsed stacks for flamegraph.pl) line by line against the
# report's backtraces.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  tmp=$BATS_TEST_TMPDIR
}

# A real run with backtraces of read and write traps, its report $tmp/r.json.
traced_run() {
  needs_preload
  printf '%s\n' '[rule a]' 'size = 100' 'protect = none' \
    'on_read = count, backtrace, grant-read' 'on_write = count, backtrace, grant-rw' \
    '[rule b]' 'size = 200' >"$tmp/p.ini"
  "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- "$build/tests/progs/access" 20 5 rw \
    >/dev/null 2>&1
  assert_file_exist "$tmp/r.json"
}

@test "report --csv sites and rules: every row of the report, read back by a CSV parser" {
  traced_run
  for table in sites rules; do
    "$rtlctl" report --csv "$table" "$tmp/r.json" >"$tmp/$table.csv"
    run python3 - "$tmp/r.json" "$tmp/$table.csv" "$table" <<'PY'
import csv, json, sys
r = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
if sys.argv[3] == "sites":
    want = [{"site": s["site"], "rule": s["rule"], "regions": str(s["regions"]),
             "bytes": str(s["bytes"]), "read_traps": str(s["read_traps"]),
             "write_traps": str(s["write_traps"]), "line": s["line"]} for s in r["sites"]]
else:
    want = [{"rule": s["name"], "mechanism": s["mechanism"], "regions": str(s["selected"]),
             "bytes": str(s["bytes"]), "read_traps": str(s["read_traps"]),
             "write_traps": str(s["write_traps"])} for s in r["rules"]]
assert rows == want, (rows, want)
assert len(rows) == 2, rows
print("ok")
PY
    assert_output ok
  done
}

@test "report --csv quotes commas, quotes and spaces, and escapes control characters" {
  python3 - "$top/tests/reports/sample.json" "$tmp/q.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["sites"][0]["site"] = 'lib, "x" y!f\x1b[2J'
json.dump(r, open(sys.argv[2], "w"))
PY
  "$rtlctl" report --csv sites "$tmp/q.json" >"$tmp/q.csv"
  [[ $(LC_ALL=C grep -c $'\x1b' "$tmp/q.csv") -eq 0 ]]
  run python3 -c 'import csv, sys; print(list(csv.reader(open(sys.argv[1])))[1][0])' "$tmp/q.csv"
  assert_output 'lib, "x" y!f\x1b[2J'
}

@test "report --folded: one line per stack, program first, main before the trap, weights summing to the traps" {
  traced_run
  run "$rtlctl" report --folded "$tmp/r.json"
  assert_success
  printf '%s\n' "$output" >"$tmp/folded"
  run python3 - "$tmp/r.json" "$tmp/folded" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
stacks = {}
for line in lines:
    m = re.fullmatch(r"(\S+) (\d+)", line)
    assert m, f"not 'stack count': {line!r}"
    frames = m.group(1).split(";")
    assert frames[0] == r["run"]["program"], frames
    assert m.group(1) not in stacks, f"stack listed twice: {line}"
    stacks[m.group(1)] = int(m.group(2))
# Weighted by traps: every backtrace's count is in some line.
assert sum(stacks.values()) == sum(b["count"] for b in r["backtraces"]), (stacks, r["backtraces"])
for b in r["backtraces"]:
    # Each frame, then the functions inlined there, outermost first.
    want = [r["run"]["program"]]
    for f, inl in reversed(list(zip(b["frames"], b["inlined"]))):
        want += [re.sub(r"(![^+]+)\+0x[0-9a-f]+$", r"\1", f)] + list(reversed(inl))
    assert ";".join(want) in stacks, (want, stacks)
# The faulting function is the leaf (pass_read or pass_write, inlined into
# main), main above it, _start at the root.
leaf = next(iter(stacks)).split(";")
assert leaf[-1] in ("access!pass_read", "access!pass_write") and leaf[-2] == "access!main" \
    and leaf[1] == "access!_start", leaf
print("ok")
PY
  assert_output ok
}

@test "report: sites and backtrace frames carry their source line, with inlined calls" {
  traced_run
  python3 - "$tmp/r.json" "$top/tests/progs/access.c" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
src = open(sys.argv[2]).read().split("\n")
def line(loc):
    m = re.fullmatch(r"access\.c:(\d+)", loc)
    assert m, loc
    return src[int(m.group(1)) - 1]
# Each site's source is its allocating call.
sites = {s["site"]: s["source"] for s in r["sites"]}
assert "calloc(" in line(sites["access!alloc_a"]), sites
assert "malloc(" in line(sites["access!alloc_b"]), sites
# pass_read and pass_write are inlined into main: the trapping access
# inside them, then the call in main.
seen = 0
for b in r["backtraces"]:
    assert len(b["sources"]) == len(b["frames"]), b
    first = b["sources"][0]
    inner, sep, outer = first.partition(" < ")
    fn = "pass_read" if b["kind"] == "read" else "pass_write"
    if not sep:
        continue
    seen += 1
    loc, name = inner.split(" ")
    assert name == "(%s)" % fn, first
    assert "t[i] + at" in line(loc), first
    assert fn + "(" in line(outer), first
# make's build (debugoptimized) inlines them.
assert seen, [b["sources"] for b in r["backtraces"]]
PY
}

@test "report --folded without backtraces says how to get them; --csv takes a table" {
  run --separate-stderr "$rtlctl" report --folded "$top/tests/reports/sample.json"
  assert_success
  assert_output ""
  assert_equal "$stderr" "rtlctl report: $top/tests/reports/sample.json: no trap backtraces (the backtrace action of on_read/on_write records them)"
  run --separate-stderr "$rtlctl" report --csv nope "$top/tests/reports/sample.json"
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl report: --csv takes sites or rules, not 'nope'"
  run --separate-stderr "$rtlctl" report --csv sites --folded "$top/tests/reports/sample.json"
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl report: one of --json, --csv, --folded, --plot, --html and --trace at a time"
}

@test "report: the top regions are told apart by address, size, site and rule" {
  traced_run
  run python3 - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
top = r["top_regions"]
assert len(top) == 20, len(top)
addrs = [t["address"] for t in top]
assert all(a.startswith("0x") and int(a, 16) > 0 for a in addrs), addrs
assert len(set(addrs)) == len(addrs), addrs       # one row per region
for t in top:                                     # access: 20 a's trap, 100 bytes
    assert (t["site"], t["rule"], t["size"]) == ("access!alloc_a", "a", 100), t
print("ok")
PY
  assert_output ok
  run "$rtlctl" report "$tmp/r.json"
  assert_success
  assert_line --regexp '^ +1 +1 +0x[0-9a-f]+ +100  access!alloc_a \(a\)$'
  n=$(grep -cE '^ +1 +1 +0x[0-9a-f]+ +100  access!alloc_a \(a\)$' <<<"$output")
  assert_equal "$n" 20
}

# A run that records every trap (events = traps), its report $tmp/e.json.
events_run() {
  needs_preload
  command -v gnuplot >/dev/null || fail "gnuplot is not installed (scripts/deps.sh test installs it)"
  printf '%s\n' '[rtl]' 'events = traps' '[rule a]' 'size = 100' 'protect = none' \
    'on_read = count, grant-read' 'on_write = count, grant-rw' \
    '[rule b]' 'size = 200' 'protect = read' >"$tmp/e.ini"
  "$rtlctl" run -c "$tmp/e.ini" -o "$tmp/e.json" -- "$build/tests/progs/access" 20 5 rw \
    >/dev/null 2>&1
  assert_file_exist "$tmp/e.json"
}

@test "report --plot FILE.png: a whole PNG image of the size asked, not blank" {
  events_run
  run "$rtlctl" report --plot "$tmp/p.png" "$tmp/e.json"
  assert_success
  assert_output ""
  run python3 - "$tmp/p.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
at, chunks, idat = 8, [], b""
while at < len(data):
    n, kind = struct.unpack(">I4s", data[at:at + 8])
    body = data[at + 8:at + 8 + n]
    crc, = struct.unpack(">I", data[at + 8 + n:at + 12 + n])
    assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind}"
    chunks.append(kind)
    if kind == b"IHDR":
        w, h, depth, color = struct.unpack(">IIBB", body[:10])
    if kind == b"IDAT":
        idat += body
    at += 12 + n
assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND", chunks
assert (w, h) == (1000, 760), (w, h)
channels = {2: 3, 6: 4, 0: 1, 4: 2}[color]
raw = zlib.decompress(idat)
assert len(raw) == h * (1 + w * channels * depth // 8), len(raw)
assert len(set(raw)) > 8, "a blank image"
print("ok")
PY
  assert_output ok
}

@test "report --plot FILE.svg: traps over time for each rule, and each site's bars" {
  events_run
  run "$rtlctl" report --plot "$tmp/p.svg" "$tmp/e.json"
  assert_success
  run python3 - "$tmp/p.svg" "$tmp/e.json" <<'PY'
import json, sys, xml.etree.ElementTree as ET
svg = ET.parse(sys.argv[1]).getroot()
texts = {"".join(t.itertext()).strip() for t in svg.iter() if t.tag.endswith("text")}
r = json.load(open(sys.argv[2]))
assert "traps over time by rule" in texts, texts
for rule in {e["rule"] for e in r["events"]}:
    assert rule in texts, (rule, texts)       # a legend entry per rule with events
for s in r["sites"]:
    assert s["site"] in texts, (s["site"], texts)
assert f'rtl: access (pid {r["run"]["pid"]})' in texts, texts
print("ok")
PY
  assert_output ok
}

@test "report --plot: without events only the sites; nothing to draw, no gnuplot, a bad name: errors" {
  needs_preload
  traced_run
  run "$rtlctl" report --plot "$tmp/s.svg" "$tmp/r.json"
  assert_success
  ! grep -q 'traps over time' "$tmp/s.svg"
  grep -q 'traps and bytes by site' "$tmp/s.svg"
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["sites"] = []; json.dump(r, open(sys.argv[2], "w"))' \
    "$tmp/r.json" "$tmp/empty.json"
  run "$rtlctl" report --plot "$tmp/n.png" "$tmp/empty.json"
  assert_equal "$status" 1
  assert_output "rtlctl report: --plot: nothing to draw (no sites, no events)"
  PATH=/nonexistent run "$rtlctl" report --plot "$tmp/n.png" "$tmp/r.json"
  assert_equal "$status" 1
  assert_output --partial "rtlctl report: --plot needs gnuplot (Debian: gnuplot-nox)"
  run --separate-stderr "$rtlctl" report --plot "$tmp/n.jpg" "$tmp/r.json"
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl report: --plot writes FILE.png or FILE.svg, not '$tmp/n.jpg'"
}

@test "report --trace: Chrome trace-event JSON, a track per process, every trap of the report on it" {
  needs_preload
  # A parent that writes a random half of its blocks and two forked
  # children that write all of them: each process traps on its own.
  printf '%s\n' '[rtl]' 'events = traps' '[rule all]' 'size = 64' 'protect = read' \
    'on_write = count, grant-rw' >"$tmp/p.ini"
  "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- "$build/tests/progs/live_blocks" 300 64 random 2 \
    >/dev/null 2>&1
  "$rtlctl" report --trace "$tmp/t.json" "$tmp/r.json"
  run python3 "$top/tests/reports/validate_trace.py" "$tmp/t.json" "$tmp/r.json"
  assert_success
  assert_output ""
  run python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))["traceEvents"]
print(len(r["processes"]), len({e["pid"] for e in t if e.get("cat") == "trap"}),
      len(r["events"]) == r["totals"]["traps"] > 300)' "$tmp/r.json" "$tmp/t.json"
  # Three processes, traps in each, every trap of the run an event.
  assert_output "3 3 True"
  # To stdout, the same; with another output, a usage error.
  "$rtlctl" report --trace - "$tmp/r.json" | cmp - "$tmp/t.json"
  run "$rtlctl" report --trace "$tmp/x.json" --html "$tmp/x.html" "$tmp/r.json"
  assert_failure 2
  assert_output --partial "one of --json, --csv, --folded, --plot, --html and --trace at a time"
}
