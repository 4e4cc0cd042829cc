#!/usr/bin/env bats
# CPython's own tests (Debian's libpython3.11-testsuite), run with
# faulthandler on (its alternate signal stack is a malloc'd block), under
# every kind of policy: they must pass as they pass without rtl. The
# interpreter is Debian's, /usr/bin/python3, whatever else is on PATH.
# Left out: test_threading's test_4_daemon_threads, which crashes at random
# in CPython 3.11 itself (python/cpython#110052: a daemon thread that wakes
# during finalization exits through pthread_exit, gh-87135, fixed by
# hanging such threads in 3.14); the slower a thread runs, the likelier it
# is there then, and under alias-epoch it crashed about 1 run in 10.
# Verbose, so that a failure names its test and shows its traceback.

bats_require_minimum_version 1.5.0
load matrix

TESTS=(test_json test_re test_dict test_list test_sort test_unicode
  test_struct test_bytes test_set test_collections test_threading
  -i test_4_daemon_threads -v)

setup() {
  matrix_setup
  [[ -d /usr/lib/python3.11/test ]] || skip "libpython3.11-testsuite is not installed"
}

# ok MODE: that run exited 0 and the test runner says every test passed.
ok() {
  [[ $(cat "$T/runs/$1.rc") == 0 ]] && grep -q "Tests result: SUCCESS" "$T/runs/$1.out"
}

@test "CPython's tests pass under every policy as without rtl" {
  run_in none "" /usr/bin/python3 -X faulthandler -m test "${TESTS[@]}"
  assert_equal "$(cat "$T/runs/none.rc")" 0
  bad=()
  for m in "${POLICIES[@]}"; do
    run_in "$m" "" /usr/bin/python3 -X faulthandler -m test "${TESTS[@]}"
    printf '%s\t%s\t%s\t%s\t%s\n' cpython-tests "$m" "$(tail -n 1 "$T/runs/none.time")" \
      "$(tail -n 1 "$T/runs/$m.time")" "$(ok "$m" || echo differs)" >>"$MATRIX_LOG"
    if ! ok "$m"; then
      bad+=("$m")
      echo "# under $m:" >&3
      # What failed and why, then the runner's summary.
      grep -E -A 25 '^(FAIL|ERROR):' "$T/runs/$m.out" | head -n 80 | sed 's/^/#   /' >&3
      tail -n 15 "$T/runs/$m.out" | sed 's/^/#   /' >&3
    fi
  done
  ((${#bad[@]} == 0)) || fail "CPython's tests fail under: ${bad[*]}"
}
