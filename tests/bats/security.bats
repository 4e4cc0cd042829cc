#!/usr/bin/env bats
# The preload where someone may attack through it (issue 20): a
# secure-execution process and its environment, and the report files a
# run creates (symlinks planted in their place, a full disk, processes that
# share one name).

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
  RTLCTL=$RTL_BUILD/tools/rtlctl
}

# A setuid-root copy of tests/progs/setuid_probe.c, linked against the
# preload (the loader ignores LD_PRELOAD paths in a setuid process), in a
# directory nobody can reach; $SUID is its directory.
setuid_probe() {
  [[ $(id -u) -eq 0 ]] || skip "needs root to make a setuid-root program"
  command -v setpriv >/dev/null || skip "needs setpriv (util-linux) to drop to nobody"
  id nobody >/dev/null 2>&1 || skip "needs the user nobody"
  SUID=$(mktemp -d /tmp/rtl-suid.XXXXXX)
  chmod 755 "$SUID"
  cc -o "$SUID/probe" "$top/tests/progs/setuid_probe.c" \
    -Wl,-rpath,"$RTL_BUILD/preload" -Wl,--no-as-needed "$PRELOAD"
  chmod 4755 "$SUID/probe"
  printf 'secret\n' >"$SUID/victim"
  chmod 600 "$SUID/victim"
  run setpriv --reuid=nobody --regid=nogroup --clear-groups "$SUID/probe"
  [[ $output == "secure 1, sum 4950" ]] ||
    skip "setuid does not give secure execution here (nosuid mount?): $output"
}

teardown() {
  [[ -z ${SUID:-} ]] || rm -rf "$SUID"
  [[ -z ${FULL:-} ]] || umount "$FULL" 2>/dev/null || true
}

as_nobody() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups env "$@"
}

@test "secure execution: the environment chooses nothing, the preload writes and prints nothing" {
  setuid_probe
  # A policy error would print the first field of each line of the file.
  run --separate-stderr as_nobody RTL_CONFIG=/etc/shadow "$SUID/probe"
  assert_success
  assert_output "secure 1, sum 4950"
  assert_equal "$stderr" ""
  # The report and the raw record where the caller says: not written.
  for var in RTL_REPORT RTL_RAW; do
    run --separate-stderr as_nobody RTL_CONFIG=@builtin "$var=$SUID/victim" \
      RTL_ARENA_SIZE=lots "$SUID/probe"
    assert_success
    assert_output "secure 1, sum 4950"
    assert_equal "$stderr" ""
    assert_equal "$(cat "$SUID/victim")" secret
  done
  run ls -A "$SUID"
  assert_output "probe
victim"
}

@test "report files: a planted symlink or file is never followed, truncated or replaced" {
  d=$BATS_TEST_TMPDIR/planted
  mkdir "$d"
  printf 'secret\n' >"$d/victim"
  chmod 600 "$d/victim"
  ln -s victim "$d/r.json"   # the report's name
  ln -s victim "$d/r.raw"    # the raw record's former name
  ln -s victim "$d/kept.raw" # RTL_RAW's
  printf 'mine\n' >"$d/r.json.1"
  run --separate-stderr env RTL_RAW="$d/kept.raw" "$RTLCTL" run -c "$POL/all.ini" \
    -o "$d/r.json" -- /bin/true
  assert_success
  assert_equal "$(cat "$d/victim")" secret
  assert_equal "$(cat "$d/r.json.1")" mine
  [[ -L $d/r.json && -L $d/r.raw && -L $d/kept.raw ]]
  # The next free names, said in the summary; 0600 (the report holds argv).
  assert_equal "${stderr_lines[1]}" "rtl: report: $d/r.json.2 ($d/r.json was taken; see: rtlctl report $d/r.json.2)"
  assert_equal "$(stat -c %a "$d/r.json.2")" 600
  assert_equal "$(report_get "$d/r.json.2" 'r["run"]["program"]')" true
  assert_equal "$(stat -c %a "$d/kept.raw.1")" 600
  run "$RTLCTL" report "$d/kept.raw.1"
  assert_success
  # Nothing else was made or left.
  run ls -A "$d"
  assert_output "kept.raw
kept.raw.1
r.json
r.json.1
r.json.2
r.raw
victim"
}

@test "report files: processes that share a report name each get a file of their own" {
  d=$BATS_TEST_TMPDIR/shared
  mkdir "$d"
  # A wrapper and its children, RTL_REPORT without %p, no rtlctl run.
  RTL_CONFIG=$POL/all.ini RTL_REPORT=$d/r.json LD_PRELOAD=$PRELOAD \
    bash -c '/bin/true; /bin/true; exit 0'
  # Each leaves its raw record under the report's name (.raw), or the next
  # free one.
  run ls "$d"
  assert_output "r.raw
r.raw.1
r.raw.2"
  pids=$(for f in "$d"/*; do "$RTLCTL" report --json "$f" | python3 -c 'import json, sys; print(json.load(sys.stdin)["run"]["pid"])'; done | sort -u | wc -l)
  assert_equal "$pids" 3
}

# A tmpfs of its own in the test's folder, full to the last byte; skips if
# mounting is refused (not root, no CAP_SYS_ADMIN).
full_fs() {
  FULL=$BATS_TEST_TMPDIR/full
  mkdir "$FULL"
  mount -t tmpfs -o size=64k tmpfs "$FULL" 2>/dev/null ||
    skip "cannot mount a tmpfs here (needs root)"
  dd if=/dev/zero of="$FULL/filler" bs=4k 2>/dev/null || true
}

@test "report files: on a full disk nothing is left and one line says why" {
  full_fs
  # A process's raw record, no rtlctl.
  RTL_CONFIG=$POL/all.ini RTL_REPORT=$FULL/r.json LD_PRELOAD=$PRELOAD \
    run --separate-stderr /bin/true
  assert_success
  assert_equal "$(ls -A "$FULL")" filler
  assert_equal "$stderr" "rtl: no report written to $FULL/r.json: the raw record $FULL/r.raw: No space left on device"
  # rtlctl run's report: the run's records stay where they were made, and
  # the line says where.
  export TMPDIR=$BATS_TEST_TMPDIR/t
  mkdir "$TMPDIR"
  run --separate-stderr "$RTLCTL" run -c "$POL/all.ini" -o "$FULL/r.json" -- /bin/true
  assert_success
  assert_equal "$(ls -A "$FULL")" filler
  dir=$(ls -d "$TMPDIR"/rtl-run.*)
  assert_equal "$stderr" "rtl: no report written to $FULL/r.json: No space left on device (the raw records stay in $dir: rtlctl report $dir/*.raw)"
  run "$RTLCTL" report "$dir"/*.raw
  assert_success
}

@test "report files: rtlctl report -o on a full disk leaves nothing and says why in one line" {
  raw=$BATS_TEST_TMPDIR/a.raw
  RTL_RAW=$raw RTL_CONFIG=$POL/all.ini LD_PRELOAD=$PRELOAD "$PROGS/access" 2 2 rw >/dev/null
  [[ -f $raw ]]
  full_fs
  run --separate-stderr "$RTLCTL" report --json -o "$FULL/r.json" "$raw"
  assert_equal "$status" 3
  assert_equal "$(ls -A "$FULL")" filler
  assert_equal "$stderr" "rtl: no report written to $FULL/r.json: No space left on device (the raw record stays: rtlctl report $raw)"
}
