#!/usr/bin/env bats
# The preload's slots (preload/place/auto.c): small blocks under the auto
# and alias mechanisms, each reached through a copy of the pool of its own.
# A block whose pages must change protection sets a run of free pages
# around them in its copy with the same call; the blocks handed out there
# next need no call of their own, and get exactly the protection their
# rule asks for, with one thread or several.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
  SLOTS=$PROGS/slot_runs
}

# rep MODE EXPR: a Python expression over slot_runs' report under MODE.
rep() {
  local files=("$REP/$1"/slot_runs.*.json)
  [[ ${#files[@]} -eq 1 && -e ${files[0]} ]] || {
    echo "want one slot_runs report in $REP/$1, have: ${files[*]}" >&2
    return 1
  }
  report_get "${files[0]}" "$2"
}

@test "slots: a block made read-only sets a run of its copy's free pages with it" {
  policy maps '[rule r]' 'size = 64' 'protect = read'
  run_mode maps "$SLOTS" maps
  run cat "$BATS_TEST_TMPDIR/runs/maps.out"
  # A shared mapping of rtl's memory, read-only, and more than the block's
  # own page (one page alone before runs: its neighbours stayed writable).
  assert_output --regexp '^r--s [0-9]+$'
  local pages=${output#r--s }
  ((pages > 1 && pages <= 65))
}

# rings NAME ARGS...: slot_runs ring ARGS without rtl and under NAME-auto
# and NAME-alias (read-only blocks of up to 1 KiB, read-write ones above),
# all three alike; every read-only block's first write traps once, no
# read-write block ever traps, nothing is left to the system allocator.
rings() {
  local name=$1 m small large
  shift
  for m in auto alias; do
    policy "$name-$m" "mechanism = $m" \
      '[rule small]' 'size = 16..1K' 'protect = read' 'on_write = count, grant-rw' \
      '[rule large]' 'size = 1025..4K' 'protect = rw'
  done
  run_mode none timeout 120 "$SLOTS" ring "$@"
  run_mode "$name-auto" timeout 120 "$SLOTS" ring "$@"
  run_mode "$name-alias" timeout 120 "$SLOTS" ring "$@"
  same_as_without "$name-auto" "$name-alias"
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_output --regexp '^[0-9]+ small [0-9]+ large sum [0-9]+$'
  small=${output%% small*}
  large=${output#* small }
  large=${large%% large*}
  ((small > 1000 && large > 1000))
  for m in auto alias; do
    assert_equal "$(rep "$name-$m" '[(x["selected"], x["write_traps"], x["read_traps"]) for x in r["rules"]]')" \
      "[($small, $small, 0), ($large, 0, 0)]"
    assert_equal "$(rep "$name-$m" '(r["totals"]["stale_traps"], r["totals"]["fallbacks"])')" "(0, 0)"
  done
}

@test "slots: read-only blocks beside read-write ones, each trapping exactly as its rule says" {
  rings ring 20000
}

@test "slots: four threads taking and setting copies at once, each block as its rule says" {
  rings threads 10000 4
}

@test "slots: pages full of 16-byte blocks, four threads: a run never makes a block fall back" {
  # 256 blocks of 16 bytes fill a page, one per copy: a run holding a
  # copy of such a page while another thread looks for one there must not
  # make it look full (choose() finds none: the block would fall back).
  policy dense 'mechanism = auto' '[rule r]' 'size = 16' 'protect = read'
  run_mode dense timeout 120 "$SLOTS" dense 200000 4
  run cat "$BATS_TEST_TMPDIR/runs/dense.out"
  assert_output "820000 blocks"
  assert_equal "$(rep dense '(r["totals"]["selected"], r["totals"]["fallbacks"])')" "(820000, 0)"
}
