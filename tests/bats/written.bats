#!/usr/bin/env bats
# Dirty rules on the kernel's written bits (docs/dirty.md, "Two ways to see a
# write"; docs/compare.md, "Write barriers"): a rule whose only write action
# is dirty takes no write trap where the kernel has written bits, its epochs
# count the same changes as the trap-tracked rule's, the report says which
# way ran and why, RTL_DIRTY=traps falls back and says so, and rtlctl
# compare sets page traps, region traps, written bits and cards side by
# side. Each run byte-identical to the run without the preload.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
  GRAN=$PROGS/granularity
  PY=$(python3 -c 'import sys; print(sys.executable)')
  # Whether this process would get written bits: the kernel's answer.
  WB=$("$PY" - "$build/core/librtl.so" <<'PY'
import ctypes, sys
rtl = ctypes.CDLL(sys.argv[1])
print(1 if rtl.region_dirty_backend(None) == 2 else 0)
PY
)
}

# rep MODE EXPR: a Python expression over MODE's one report r.
rep() {
  local files=("$REP/$1"/*.json)
  [[ ${#files[@]} -eq 1 && -e ${files[0]} ]] || {
    echo "want one report in $REP/$1, have: ${files[*]}" >&2
    return 1
  }
  report_get "${files[0]}" "$2"
}

# get DIR EXPR: a Python expression over DIR/compare.json (c), printed.
get() {
  python3 -c 'import json, sys; c = json.load(open(sys.argv[1] + "/compare.json")); print(eval(sys.argv[2]))' "$1" "$2"
}

@test "written bits: a dirty-only rule takes no write trap and counts what the trapping rule counts" {
  policy wb '[rule objs]' 'site = *new_block' 'protect = read' 'on_write = dirty' 'epoch = 5ms'
  policy tr '[rule objs]' 'site = *new_block' 'protect = read' 'on_write = count, dirty' 'epoch = 5ms'
  run_mode none "$GRAN" big 65536 30
  run_mode wb "$GRAN" big 65536 30
  run_mode tr "$GRAN" big 65536 30
  same_as_without wb tr
  # The same changes, once each, whichever way saw them (page.bats has
  # the count for traps).
  run rep wb 'sum(e["diff_bytes"] for e in r["epochs"])'
  assert_output 65281
  run rep tr 'sum(e["diff_bytes"] for e in r["epochs"])'
  assert_output 65281
  run rep tr 'r["dirty"]["way"], r["totals"]["write_traps"] > 0'
  assert_output "('traps', True)"
  if [[ $WB == 1 ]]; then
    run rep wb 'r["dirty"]["way"], r["totals"]["write_traps"], sum(e["written_bytes"] for e in r["epochs"]) >= 65536'
    assert_output "('written bits', 0, True)"
  else
    run rep wb 'r["dirty"]["way"]'
    assert_output traps
  fi
  # What other barriers would rescan: the block whole, its cards: the
  # whole block, then the card of the one byte written again (a card the
  # first write leaves across an epoch's end, or a late epoch that takes
  # both writes, moves a sum by a card).
  run rep wb '[sum(e[k] for e in r["epochs"]) // 65536 for k in ("object_bytes", "card128_bytes", "card4096_bytes")]'
  assert_output --regexp '^\[[123], 1, 1\]$'
  run rep wb '(lambda c: 65536 <= c <= 65536 + 2 * 128)(sum(e["card128_bytes"] for e in r["epochs"]))'
  assert_output True
  run rep wb 'r["sites"][0]["diff_bytes"], 65536 <= r["sites"][0]["card512_bytes"] <= 65536 + 2 * 512'
  assert_output "(65281, True)"
}

@test "written bits: RTL_DIRTY=traps falls back, and the report says why" {
  policy wb '[rule objs]' 'site = *new_block' 'protect = read' 'on_write = dirty' 'epoch = 5ms'
  run_mode none "$GRAN" shared 50 64
  RTL_DIRTY=traps run_mode wb "$GRAN" shared 50 64
  same_as_without wb
  run rep wb 'r["dirty"]["way"], "RTL_DIRTY=traps" in r["dirty"]["why"], r["totals"]["write_traps"] > 0'
  assert_output "('traps', True, True)"
  run "$rtlctl" report "$(ls "$REP"/wb/*.json)"
  assert_line --regexp '^dirty rules see writes by traps: .*RTL_DIRTY=traps'
}

@test "written bits: small blocks sharing pages, a system call writing into a block, fork" {
  policy wb '[rule all]' 'size = ..8K' 'protect = read' 'on_write = dirty' 'epoch = 2ms'
  prog='import os, json
d = {str(i): [i, str(i)] for i in range(20000)}
s = json.dumps(d)
r, w = os.pipe()
os.write(w, s[:60000].encode()); os.close(w)
b = bytearray(60000); n = os.readv(r, [b])
pid = os.fork()
if pid == 0:
    d["x"] = 1; os._exit(0 if len(json.dumps(d)) > len(s) else 1)
_, st = os.waitpid(pid, 0)
print(n, len(s), b[:20].decode(), st)'
  run_mode none "$PY" -c "$prog"
  run_mode wb "$PY" -c "$prog"
  same_as_without wb
  run rep wb 'sum(e["diff_bytes"] for e in r["epochs"]) > 100000, r["dirty"]["way"] == ("written bits" if '"$WB"' else "traps")'
  assert_output "(True, True)"
}

@test "compare: a dirty policy adds the written run; cards, blocks and written pages side by side" {
  printf '[rule objs]\nsite = *new_block\nprotect = read\non_write = count, dirty\nepoch = 5ms\n' >de.ini
  run --separate-stderr "$rtlctl" compare -c de.ini -o cw -- "$GRAN" big 65536 30
  assert_success
  assert_line 'outputs: identical in every run (exit status, stdout, stderr, files)'
  assert_equal "$(get cw '[r["name"] for r in c["runs"]]')" "['none', 'page', 'auto', 'written']"
  assert_line --regexp '^  rescan: cards of 128 B +'
  assert_line --regexp '^  rescan: blocks written +- +'
  assert_line --regexp '^  time in epochs +'
  # The same changes under every mechanism: cards and diffs agree. (auto's
  # may miss the second write's byte: a write landing between an epoch's
  # diff and its checkpoint is in no diff, docs/dirty.md, "Contracts".)
  assert_equal "$(get cw '[c["totals"]["runs"][m]["dirty_diff_bytes"] for m in ("page", "written")]')" \
    "[65281, 65281]"
  # The second write's card is its own epoch's (66048), or the first's when
  # a late epoch (a loaded machine) took both writes (65536).
  assert_equal "$(get cw 'all(c["totals"]["runs"][m]["dirty_card512_bytes"] in (65536, 66048) for m in ("page", "auto", "written"))')" True
  assert_equal "$(get cw 'c["totals"]["runs"]["auto"]["dirty_diff_bytes"] in (65280, 65281)')" True
  # The written run: no write trap; the count action was dropped from its
  # policy, and its blocks are regions in rtl's views.
  grep -qx 'on_write = dirty' cw/policy.written.ini
  assert_equal "$(get cw 'c["totals"]["runs"]["written"]["traps"]')" 0
  if [[ $WB == 1 ]]; then
    assert_equal "$(get cw '[r.get("dirty", {}).get("way") for r in c["runs"]]')" \
      "[None, 'traps', 'traps', 'written bits']"
    assert_equal "$(get cw 'c["totals"]["runs"]["written"]["dirty_written_bytes"] >= 65536')" True
  fi
  run file cw/compare.png
  assert_output --partial "PNG image data, 1000 x 1140"  # three panels: the rescan rows too
}
