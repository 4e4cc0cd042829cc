#!/usr/bin/env bash
# make check-sanitize: the unit and bats suites under AddressSanitizer +
# UndefinedBehaviorSanitizer, and the threaded tests under ThreadSanitizer.
# Known incompatibilities (docs/reliability.md): under TSan a death by
# SIGSEGV is reported by TSan instead, so death tests run only under ASan;
# and TSan records an instrumented store before the store executes, so a
# store that traps looks as if it raced with the handler that copies the
# region (dirty.c's threads_first_writes_race): that test runs under ASan.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh
status=0

echo "== AddressSanitizer + UndefinedBehaviorSanitizer: every unit and bats test"
[[ -f build-asan/build.ninja ]] ||
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-asan >/dev/null || exit 1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The preload cannot be instrumented: ASan's runtime must be the first
# library of the process, and the preload goes into programs built without
# it. Its suites (and the tests of rtlctl run and make demo, which use it)
# run in the normal build only; so does the DSM, which Open MPI starts
# under mpirun with its own memory hooks. unit/sweep checks glibc's string
# functions, which ASan's interceptors replace (and run a byte at a time
# through trapping regions, past the test's time limit). bats/bench runs
# callgrind, which cannot run an ASan program (its runtime must come first).
log=build-asan/check-sanitize.log
RTL_TEST_SKIP="bats/preload bats/preload_programs bats/policy_engine bats/preload_syscalls bats/sigmask bats/security bats/dsm bats/dsm_hosts bats/exact bats/page bats/slots bats/bench unit/sweep" \
RTL_SANITIZE_CFLAGS="-fsanitize=address,undefined" tests/run.sh build-asan >"$log"
((PIPESTATUS[0] == 0)) || status=1
# Failures with their details, the skipped suites, and the count.
grep -E '^FAIL|^    |skipped|^[0-9]+ passed' "$log" | grep -v '^    ok '
grep -c '# skip' "$log" | sed 's/^/tests skipped inside suites: /' 

echo "== ThreadSanitizer: threads, MAP2 across threads, the trap's fast path across threads, soak"
[[ -f build-tsan/build.ninja ]] ||
  meson setup build-tsan -Db_sanitize=thread -Db_lundef=false >/dev/null
ninja -C build-tsan >/dev/null || exit 1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
tsan_failed=0
# (The fast path's threads test only: its nested-trap test, like
# unit-trap's, takes a SIGSEGV inside a signal handler, which
# ThreadSanitizer's signal handling does not deliver.)
for t in "build-tsan/tests/unit/unit-threads" "build-tsan/tests/unit/unit-map2" \
         "build-tsan/tests/unit/unit-fast_trap threads_on_the_fast_path" \
         "build-tsan/tests/progs/soak -t 8 -n 3000 -S 11"; do
  if out=$($t 2>&1) && ! grep -q -e '^not ok' -e 'ThreadSanitizer' <<<"$out"; then
    echo "ok   $t"
  else
    echo "FAIL $t"
    grep -e '^not ok' -e 'WARNING: ThreadSanitizer' -e 'SUMMARY' <<<"$out" | head -n 20
    tsan_failed=1
  fi
done
((tsan_failed)) && status=1
exit $status
