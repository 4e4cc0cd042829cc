#!/usr/bin/env bats
# The preload where someone may attack through it (issue 20): a
# secure-execution process and its environment, and the report files a
# run creates (symlinks planted in their place, a full disk, processes that
# share one name).

bats_require_minimum_version 1.5.0
load preload_helpers

setup() {
  preload_setup
  top=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
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
