#!/usr/bin/env bats
# rtlctl compare (docs/compare.md): the program without rtl, under page
# and under region mechanisms; identical outputs checked, a differing run
# reported with its first differing line, the figures read back from
# compare.json, the plot checked as an image, bad input refused.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  needs_preload
  gran=$build/tests/progs/granularity
  tmp=$BATS_TEST_TMPDIR
  cd "$tmp"
  printf '[rule objs]\nsite = *new_block\nprotect = read\non_write = count, grant-rw\n' >objs.ini
}

# get DIR EXPR: a Python expression over DIR/compare.json (c), printed.
get() {
  python3 -c 'import json, sys; c = json.load(open(sys.argv[1] + "/compare.json")); print(eval(sys.argv[2]))' "$1" "$2"
}

@test "compare: shared pages give false sharing under page only, with exact counts; outputs identical" {
  run --separate-stderr "$rtlctl" compare -c objs.ini -o c1 --with auto,alias -- "$gran" shared 32 64
  assert_success
  assert_line 'outputs: identical in every run (exit status, stdout, stderr, files)'
  assert_line --regexp '^rule objs$'
  assert_line --regexp '^  false-sharing traps +32 +0 +0 '
  assert_equal "$(get c1 '[r["name"] for r in c["runs"]]')" "['none', 'page', 'auto', 'alias']"
  assert_equal "$(get c1 'c["identical"]')" True
  f='(lambda r: (r["traps"], r["false_sharing_traps"], r["grants"], r["granted_bytes"]))'
  assert_equal "$(get c1 "$f(c['rules'][0]['runs']['page'])")" "(64, 32, 64, 262144)"
  assert_equal "$(get c1 "$f(c['rules'][0]['runs']['auto'])")" "(32, 0, 32, 2048)"
  assert_equal "$(get c1 "$f(c['rules'][0]['runs']['alias'])")" "(32, 0, 32, 2048)"
  assert_equal "$(get c1 'c["rules"][0]["ratio_to_page"]["auto"]["traps"]')" 0.5
  assert_equal "$(get c1 'c["sites"][0]["site"], c["sites"][0]["runs"]["page"]["false_sharing_traps"]')" \
    "('granularity!new_block', 32)"
  # Every run's files are there, the reports made by the runs themselves.
  for f in policy.page.ini policy.auto.ini page.json auto.json alias.json none.stdout page.stdout; do
    assert_file_exist "c1/$f"
  done
  grep -qx 'mechanism = page' c1/policy.page.ini
  assert_equal "$(python3 -c 'import json; print(json.load(open("c1/page.json"))["rules"][0]["mechanism"])')" page
}

@test "compare: one 256 KiB block, 64 page traps against 1 region trap" {
  run --separate-stderr "$rtlctl" compare -c objs.ini -o c2 -- "$gran" big 262144
  assert_success
  # Without --with: the region mechanism of the policy's rules (auto).
  assert_equal "$(get c2 '[r["name"] for r in c["runs"]]')" "['none', 'page', 'auto']"
  assert_equal "$(get c2 'c["rules"][0]["runs"]["page"]["traps"], c["rules"][0]["runs"]["auto"]["traps"]')" "(64, 1)"
  assert_equal "$(get c2 'c["totals"]["runs"]["page"]["false_sharing_traps"]')" 0
}

@test "compare: a program whose output differs between runs is reported, with its first differing line" {
  run --separate-stderr "$rtlctl" compare -c objs.ini -o c3 -- "$gran" pointer
  assert_equal "$status" 3
  assert_line --regexp "^outputs: DIFFER: page: stdout differs at line 1: 'block at 0x[0-9a-f]+' \(without rtl: 'block at 0x[0-9a-f]+'\)$"
  assert_equal "$(get c3 'c["identical"], c["difference"].startswith("page: stdout differs at line 1")')" "(False, True)"
}

@test "compare: the same input for every run, output files compared and left as the run without rtl left them" {
  printf 'create table t(a);\ninsert into t values(1),(2);\nselect sum(a), count(*) from t;\n' >in.sql
  # db exists before: each run starts from it, and it holds one row more
  # afterwards, as after one run without rtl.
  sqlite3 db 'create table before(x); insert into before values(7);'
  run --separate-stderr "$rtlctl" compare -o c4 --outputs db -- sqlite3 db <in.sql
  assert_success
  assert_equal "$(cat c4/none.stdout)" "3|2"
  assert_equal "$(cat c4/page.stdout)" "3|2"
  assert_equal "$(sqlite3 db 'select count(*) from t; select x from before')" "$(printf '2\n7')"
  assert_file_exist c4/outputs/page/0.db
  # A program that writes a file differently: said so. (dash ends with
  # _exit: no report, which compare says and goes on.)
  printf '#!/bin/sh\nif [ -n "$LD_PRELOAD" ]; then echo rtl >out; else echo none >out; fi\n' >w.sh
  chmod +x w.sh
  run --separate-stderr "$rtlctl" compare -o c5 --outputs out -- ./w.sh
  assert_equal "$status" 3
  assert_line "outputs: DIFFER: page: file out differs at line 1: 'rtl' (without rtl: 'none')"
  assert_equal "$(cat out)" none
  [[ $stderr == *"rtlctl compare: page: no report"* ]]
}

@test "compare: the plot is a PNG of the sites, and an SVG that names them" {
  command -v gnuplot >/dev/null || skip "no gnuplot"
  run --separate-stderr "$rtlctl" compare -c objs.ini -o c6 -- "$gran" shared 8 64
  assert_success
  python3 - c6/compare.png <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, chunks = 8, []
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
    assert zlib.crc32(kind + body) == crc, kind
    chunks.append((kind, body))
    pos += 12 + n
w, h = struct.unpack(">II", chunks[0][1][:8])
assert chunks[0][0] == b"IHDR" and (w, h) == (1000, 760), (chunks[0][0], w, h)
assert len(zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))) > w * h
PY
  grep -q 'granularity!new_block' c6/compare.svg
  grep -q '>page<' c6/compare.svg
  grep -q '>auto<' c6/compare.svg
}

@test "compare: usage errors, a bad policy for a mechanism, a folder in use, a program that is not there" {
  run --separate-stderr "$rtlctl" compare
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl compare: no program given"
  run --separate-stderr "$rtlctl" compare --with page -- true
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl compare: --with: 'page' is not auto, alias, swizzle, tag, policy or written"
  run --separate-stderr "$rtlctl" compare --with auto,auto -- true
  assert_equal "${stderr_lines[0]}" "rtlctl compare: --with: 'auto' twice"
  # Valid with auto, not with swizzle: said before anything runs.
  printf '[rule a]\nprotect = read\nepoch = 10ms\n' >epoch.ini
  run --separate-stderr "$rtlctl" compare -c epoch.ini -o c7 --with swizzle -- true
  assert_equal "$status" 1
  assert_equal "${stderr_lines[0]}" "rtlctl compare: the policy is not valid with mechanism swizzle:"
  assert_file_not_exist c7/none.stdout
  mkdir full && touch full/x
  run --separate-stderr "$rtlctl" compare -o full -- true
  assert_equal "$status" 1
  assert_equal "$stderr" "rtlctl compare: full: exists and is not empty"
  run -127 --separate-stderr "$rtlctl" compare -o c8 -- ./no-such-program
  [[ $stderr == *"rtlctl compare: ./no-such-program: No such file or directory"* ]]
  printf '[rtl]\nreport = x\n' >empty.ini
  run --separate-stderr "$rtlctl" compare -c empty.ini -- true
  assert_equal "$status" 1
  assert_equal "$stderr" "rtlctl compare: the policy has no rule: nothing to compare"
}
