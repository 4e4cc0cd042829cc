#!/usr/bin/env bats
# mechanism = tag (docs/mechanisms.md, "tag"): blocks on memory tags where
# the machine has them (aarch64 MTE: make test-aarch64 runs this suite
# under qemu-user, whose CPU has it), placed as auto elsewhere, and said
# so. Unmodified programs compute exactly what they compute without rtl,
# as under every mechanism; traps are per 16-byte granule.
#
# The records are read by this machine's rtlctl (RTL_HOST_BUILD under
# qemu-user, where the build's own rtlctl is the other machine's).

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
  unset RTL_TAG # tags wherever the machine has them (tests/run.sh)
  rtlctl=${RTL_HOST_BUILD:-$build}/tools/rtlctl
  policy tag-none '[rule all]' 'mechanism = tag' 'protect = none' \
    'on_read = count, grant-rw' 'on_write = count, grant-rw'
  policy tag-epoch '[rule all]' 'mechanism = tag' 'protect = none' \
    'on_read = count, grant-rw' 'on_write = count, grant-rw' 'epoch = 1ms'
  policy tag-grant-read '[rule all]' 'mechanism = tag' 'protect = none' \
    'on_read = count, grant-read' 'on_write = count, grant-rw'
  # Tags have no read-only: placed as auto places them.
  policy tag-read '[rule all]' 'mechanism = tag' 'protect = read' \
    'on_write = count, grant-rw'
  MODES=(tag-none tag-epoch tag-grant-read tag-read)
}

# Whether this machine's librtl places regions on tags (its probe's
# sentence, from the unit test that prints it).
have_tags() {
  ${RTL_RUN:-} "$build/tests/unit/unit-tag" 2>/dev/null | grep -q '^# memory tagging (MTE)'
}

# Each mode, its policy's warnings said already (rtlctl check says them;
# the run must print what the program prints).
tag_runs() {
  local m
  run_mode none "$@"
  for m in "${MODES[@]}"; do
    RTL_WARNED=$POL/$m.ini run_mode "$m" "$@"
  done
  same_as_without "${MODES[@]}"
}

@test "under qemu-user the tag tests run on tags, not on the fallback" {
  # qemu's default CPU has MTE: were the probe to say no there, every
  # test below would check the fallback only.
  [[ -n ${RTL_RUN:-} ]] || skip "native: tags where the CPU has MTE"
  have_tags
}

@test "the report says where tag rules' blocks went, and why" {
  RTL_WARNED=$POL/tag-none.ini run_mode tag-none ${RTL_RUN:-} "$PROGS/heap_walk"
  run rep tag-none 'r["tag"]["placed"] + ": " + r["tag"]["why"]'
  assert_success
  if have_tags; then
    assert_output --regexp '^tags: memory tagging \(MTE\)'
  else
    assert_output --regexp '^auto: '
  fi
  run "$rtlctl" report "$REP/tag-none"/*.raw
  assert_line --regexp '^tag +on (tags|auto): '
  "$rtlctl" report --json "$REP/tag-none"/*.raw >"$BATS_TEST_TMPDIR/r.json"
  run "$top/tests/reports/validate.py" "$BATS_TEST_TMPDIR/r.json"
  assert_success
}

@test "auto takes tags for protect = none where every grant is read-write" {
  policy auto-none '[rule all]' 'protect = none' \
    'on_read = count, grant-rw' 'on_write = count, grant-rw'
  policy auto-grant-read '[rule all]' 'protect = none' \
    'on_read = count, grant-read' 'on_write = count, grant-rw'
  MODES=(auto-none auto-grant-read)
  tag_runs ${RTL_RUN:-} "$PROGS/stress"
  # An auto rule's aligned blocks go auto's way: none is left over.
  [[ $(report_sum auto-none fallbacks) -eq 0 ]]
  if have_tags; then
    run rep auto-none 'r["tag"]["placed"]'
    assert_output tags
  else
    run rep auto-none '"tag" in r'
    assert_output False
  fi
  # grant-read keeps auto's copies: a write after a read traps again.
  run rep auto-grant-read '"tag" in r'
  assert_output False
}

@test "protect = read and grant-read: warned, placed as auto, exact" {
  run_mode tag-read ${RTL_RUN:-} "$PROGS/heap_walk"
  run cat "$BATS_TEST_TMPDIR/runs/tag-read.err"
  assert_output --partial "warning: rule all: mechanism = tag has no read-only (protect = read)"
  run "$rtlctl" check "$POL/tag-grant-read.ini"
  assert_output --partial "grant-read grants read-write"
  assert_line --regexp "^tag rules here: (on memory tags|placed as auto): "
  # protect = rw: no read traps, nothing to warn of.
  policy tag-rw '[rule all]' 'mechanism = tag' 'protect = rw'
  run "$rtlctl" check "$POL/tag-rw.ini"
  assert_success
  refute_output --partial "warning"
  if have_tags; then
    run rep tag-read 'r["tag"]["placed"] + ": " + r["tag"]["why"]'
    assert_output --regexp '^auto: .*rule all \(protect = read\) placed as auto'
  fi
}

@test "heap walks, strings and wide strings: exact under every tag policy" {
  tag_runs ${RTL_RUN:-} "$PROGS/heap_walk"
  tag_runs ${RTL_RUN:-} "$PROGS/wide_chars"
  # Every block trapped on its first touch, under tags as on the views.
  [[ $(report_sum tag-none read_traps) -gt 0 ]]
}

@test "threads allocate, resize and free through every malloc call: exact" {
  tag_runs ${RTL_RUN:-} "$PROGS/stress"
  [[ $(report_sum tag-none traps) -gt 0 ]]
  # Its aligned_alloc(256) and memalign(4096) blocks: tags keep 16 bytes,
  # so a tag rule leaves them to the system allocator, and says so.
  if have_tags; then
    run rep tag-none '[n for n in r["notes"] if "memory tags could not take" in n]'
    assert_output --regexp "allocations of mechanism = tag rules"
  fi
}

@test "fork: the child sees the heap of the fork and keeps its own writes" {
  tag_runs ${RTL_RUN:-} "$PROGS/fork_iso"
}

@test "system calls on protected granules: waitpid's status, path names, fortified reads" {
  # Under qemu-user, auto (tag-read's placement) has the wrappers alone:
  # waitpid is no wrapped call (docs/aarch64.md).
  [[ -z ${RTL_RUN:-} ]] || MODES=(tag-none tag-epoch tag-grant-read)
  tag_runs ${RTL_RUN:-} "$PROGS/wait_status"
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_output "child exited 42, rusage filled"
  tag_runs ${RTL_RUN:-} "$PROGS/path_names"
  tag_runs ${RTL_RUN:-} "$PROGS/fortified"
  # read, fread, recv and getcwd into protected granules: resolved by
  # rtl before the kernel saw them (tests/unit/tag.c shows the trap).
  [[ $(report_sum tag-none syscall_buffers) -gt 0 ]]
}

@test "epochs re-protect tag blocks with no system call" {
  tag_runs ${RTL_RUN:-} "$PROGS/epoch_blocks" 200 20 2000
  # Later rounds trap again: the epochs protected the blocks again.
  [[ $(report_sum tag-epoch write_traps) -gt 200 ]]
}

@test "a program's own SIGSEGV handler and its own crash stay its own" {
  local m
  tag_runs ${RTL_RUN:-} "$PROGS/own_segv"
  # The shell's line naming the command differs; the status may not.
  run_mode none ${RTL_RUN:-} "$PROGS/null_crash"
  for m in "${MODES[@]}"; do
    RTL_WARNED=$POL/$m.ini run_mode "$m" ${RTL_RUN:-} "$PROGS/null_crash"
    cmp "$BATS_TEST_TMPDIR/runs/none.rc" "$BATS_TEST_TMPDIR/runs/$m.rc"
    cmp "$BATS_TEST_TMPDIR/runs/none.out" "$BATS_TEST_TMPDIR/runs/$m.out"
  done
  run cat "$BATS_TEST_TMPDIR/runs/tag-none.rc"
  assert_output 139
}

@test "compare --with tag: no false sharing where page protection has some" {
  local dir=$BATS_TEST_TMPDIR/cmp
  printf '[rule blocks]\nsite = *new_block\nprotect = none\non_read = count, grant-rw\non_write = count, grant-rw\n' \
    >"$POL/blocks.ini"
  RTL_PRELOAD=$PRELOAD run "$rtlctl" compare --with tag -o "$dir" -c "$POL/blocks.ini" \
    -- ${RTL_RUN:-} "$PROGS/granularity" shared 100 16
  assert_success
  assert_output --partial "outputs: identical in every run"
  run python3 - "$dir" <<'PY'
import json, sys
for name in ("page", "tag"):
    t = json.load(open(sys.argv[1] + "/" + name + ".json"))["totals"]
    print(name, t["traps"], t["false_sharing_traps"])
PY
  assert_success
  # 100 pairs of 16-byte blocks on shared pages: the page tracker traps
  # twice a pair, once for the neighbour's protection; granules once.
  assert_line "page 200 100"
  assert_line "tag 100 0"
}

@test "real programs: sort, sed, grep and gawk on tags, as without rtl" {
  local p=${RTL_AARCH64_PROGRAMS:-} text=$BATS_TEST_TMPDIR/text lib
  [[ -n ${RTL_RUN:-} && -x $p/usr/bin/gawk ]] ||
    skip "Debian's arm64 programs: make test-aarch64 fetches them (scripts/deps-aarch64.sh)"
  lib=$p/usr/lib/aarch64-linux-gnu:$p/lib/aarch64-linux-gnu
  python3 - "$text" <<'PY'
import random, sys
random.seed(1)
words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
with open(sys.argv[1], "w") as f:
    for _ in range(20000):
        f.write(" ".join(random.choice(words) + str(random.randint(0, 99)) for _ in range(8)) + "\n")
PY
  policy auto-none '[rule all]' 'protect = none' \
    'on_read = count, grant-rw' 'on_write = count, grant-rw'
  MODES=(tag-none tag-epoch auto-none)
  LD_LIBRARY_PATH=$lib tag_runs $RTL_RUN "$p/usr/bin/sort" "$text"
  [[ $(report_sum tag-none traps) -gt 0 ]]
  LD_LIBRARY_PATH=$lib tag_runs $RTL_RUN "$p/bin/sed" -e 's/alpha\([0-9]*\)/A\1a/g' "$text"
  LD_LIBRARY_PATH=$lib tag_runs $RTL_RUN "$p/bin/grep" -c -E 'beta[0-9]+ gamma' "$text"
  LD_LIBRARY_PATH=$lib tag_runs $RTL_RUN "$p/usr/bin/gawk" \
    '{ for (i = 1; i <= NF; i++) c[$i]++ } END { for (k in c) n++; print n, NR }' "$text"
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_output "800 20000"
}
