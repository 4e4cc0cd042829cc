#!/usr/bin/env bats
# The example programs (examples/): each runs and prints what its comments
# promise. tests/run.sh exports RTL_BUILD, the build directory.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  ex="$build/examples"
  [[ -x $ex/table2 ]] || skip "examples not built (-Dexamples=false)"
}

@test "table2: all four columns: read no trap, write trap, write no trap" {
  run ${RTL_RUN:-} "$ex/table2"
  assert_success
  for col in "1. pages (valloc, mprotect)" "2. region, bound pointer" \
             "3. region, unbounded pointer" "4. C++ rtl::region_ptr<char>"; do
    line=$(grep -F "$col" <<<"$output")
    [[ $line =~ \ a\ =\ x\[0\]:\ no\ trap\ +x\[1\]\ =\ 1:\ trap\ +x\[2\]\ =\ 2:\ no\ trap\ *$ ]]
  done
  assert_line "traps in all: 4 (one per column)"
  refute_output --partial WRONG
}

@test "table3: pages trap for the neighbour, regions only for the object" {
  run ${RTL_RUN:-} "$ex/table3"
  assert_success
  assert_line --regexp '^pages +v = b\[0\]: trap +v = a\[0\]: no trap +a\[1\] = 1: trap +a\[2\] = 2: no trap +-> 2 traps$'
  assert_line --regexp '^regions +v = b\[0\]: no trap +v = a\[0\]: trap +a\[1\] = 1: trap +a\[2\] = 2: no trap +-> 2 traps$'
  refute_output --partial "not on one page"
}

@test "sor: each written row traps once per iteration; the heat moves down" {
  run ${RTL_RUN:-} "$ex/sor"
  assert_success
  for it in 1 2 3 4 5; do
    assert_line "iteration $it: write traps: red 1-8, black 1-8 (16 traps; 4 KiB pages would take 32)"
  done
  # Rows changed against the twins: two more red rows per iteration.
  assert_line --regexp '^ +rows changed: red 1-2, black 1 \([0-9]+ bytes changed\)$'
  assert_line --regexp '^ +rows changed: red 1-4, black 1-3 \('
  assert_line --regexp '^ +rows changed: red 1-8, black 1-8 \('
  assert_line "rows 0 and 9 (read, not written): never trapped"
  refute_output --partial "region_dirty found"
}

@test "checkpoint: diffs per epoch restore byte for byte in a fresh process" {
  dir=$(mktemp -d)
  run ${RTL_RUN:-} "$ex/checkpoint" run "$dir/log" "$dir/image"
  assert_success
  assert_line --regexp '^epoch 0: 4000 objects written'
  assert_line --regexp '^epoch 8: +[0-9]+ objects written'
  # Incremental epochs: diffs far smaller than whole objects and pages.
  line=$(grep '^epochs 1-8:' <<<"$output")
  [[ $line =~ diffs\ ([0-9]+)\ bytes.*objects\ ([0-9]+).*pages\ ([0-9]+) ]]
  diff=${BASH_REMATCH[1]} whole=${BASH_REMATCH[2]} pages=${BASH_REMATCH[3]}
  ((diff > 0 && diff * 3 < whole && diff * 50 < pages))
  assert_file_exist "$dir/log"
  assert_line --regexp '^writes seen by (written bits|traps): '
  # On traps (RTL_DIRTY=traps) the same log, byte for byte: same marks,
  # same diffs, whichever way the writes were seen.
  RTL_DIRTY=traps run ${RTL_RUN:-} "$ex/checkpoint" run "$dir/log2" "$dir/image2"
  assert_success
  assert_line 'writes seen by traps: traps chosen by RTL_DIRTY=traps'
  cmp "$dir/log" "$dir/log2"

  run ${RTL_RUN:-} "$ex/checkpoint" restore "$dir/log" "$dir/image"
  assert_success
  assert_line --regexp '^restored 4000 objects from 9 epochs \([0-9]+ diffs\) in process [0-9]+: identical to the image$'

  # A log cut short or corrupted is refused, never applied wrongly.
  size=$(stat -c %s "$dir/log")
  head -c $((size - 3)) "$dir/log" >"$dir/short"
  run ${RTL_RUN:-} "$ex/checkpoint" restore "$dir/short" "$dir/image"
  assert_failure
  # The last byte is the end mark of the last diff: make it a run length.
  cp "$dir/log" "$dir/bad"
  printf '\x7f' | dd of="$dir/bad" bs=1 seek=$((size - 1)) conv=notrunc status=none
  run ${RTL_RUN:-} "$ex/checkpoint" restore "$dir/bad" "$dir/image"
  assert_failure
  assert_output --regexp '^epoch 8 object [0-9]+: Invalid argument$'
  rm -rf "$dir"
}

@test "checkpoint: with no arguments, runs then restores in a child process" {
  # The child execs the program again: under qemu-user (make
  # test-aarch64) an aarch64 program cannot start another one.
  needs_native "exec under qemu-user"
  run ${RTL_RUN:-} "$ex/checkpoint"
  assert_success
  run_pid=$(sed -n 's/^run in process \([0-9]*\)$/\1/p' <<<"$output")
  restore_pid=$(sed -n 's/.* in process \([0-9]*\): identical to the image$/\1/p' <<<"$output")
  [[ -n $run_pid && -n $restore_pid && $run_pid != "$restore_pid" ]]
}

@test "cardmark: objects written are exactly the ones scanned; cards scan more" {
  run ${RTL_RUN:-} "$ex/cardmark"
  assert_success
  assert_line --regexp '^cycle 4: 300 stores, [0-9]+ young pointers to find$'
  assert_line --regexp '^every young pointer found: yes; cards scanned [0-9.]+x the bytes of the objects written$'
  # Per cycle: the diff scan finds as many pointers as there were to find.
  want=$(grep -c 'young pointers to find' <<<"$output")
  [[ $want == 4 ]]
  while read -r n; do
    grep -q "regions (diffs): .* $n found" <<<"$output"
  done < <(sed -n 's/.*, \([0-9]*\) young pointers to find$/\1/p' <<<"$output")
}

@test "demo.sh: runs table2 first, then the other examples" {
  needs_preload
  # rtlctl run starts the program itself: under qemu-user (make
  # test-aarch64) an aarch64 program cannot start another one.
  needs_native "rtlctl run under qemu-user"
  run "$top/examples/demo.sh" "$build"
  assert_success
  first=$(grep -m1 '^== ' <<<"$output")
  [[ $first == "== Table 2:"* ]]
  assert_line --partial "traps in all: 4"
  assert_line --partial "identical to the image"
  assert_line --partial "every young pointer found: yes"
  # Every report the demo points at is there to open once it has ended.
  hints=$(grep -o 'see: rtlctl report [^)]*' <<<"$output" | sed 's/^see: rtlctl report //')
  [[ -n $hints ]]
  for f in $hints; do
    assert_file_exist "$f"
  done
}

# The example policies (examples/policies/, installed under share/rtl):
# each is valid, and python3 running a small workload under it prints what
# it prints without rtl, while the policy's rule selects and traps.
@test "policies: each example policy checks, and python3 under it is unchanged and traps" {
  needs_preload
  needs_native "rtlctl run under qemu-user"
  command -v python3 >/dev/null || skip "python3 not installed"
  cd "$BATS_TEST_TMPDIR"
  prog='import json; d = {str(i): [i] * (i % 7) for i in range(3000)}; s = json.dumps(d); print(len(s), sum(len(v) for v in json.loads(s).values()))'
  python3 -c "$prog" >plain.out
  for p in "$BATS_TEST_DIRNAME"/../../examples/policies/*.ini; do
    name=$(basename "$p" .ini)
    run "$rtlctl" check "$p"
    assert_line --index 0 "$p: ok, 1 rule"
    assert_line --index 1 --regexp '^protection changes here by (page tables|mprotect): '
    run --separate-stderr "$rtlctl" run -c "$p" -o "$name.json" -- python3 -c "$prog"
    assert_success
    assert_output "$(cat plain.out)"
    run python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["totals"]
print(t["selected"] > 0, t["read_traps"] + t["write_traps"] > 0)' "$name.json"
    assert_output "True True" || fail "policy $name"
  done
}
