#!/usr/bin/env bats
# What rtlctl check warns of in a valid policy (policy/warn.c: a swizzle
# rule that can trap, a rule that selects nothing), said by the preload
# when rtlctl did not start it, once per run (docs/report.md, "Policy
# warnings"), and in every report as a note.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  needs_preload
  tmp=$BATS_TEST_TMPDIR
  cd "$tmp"
  printf '%s\n' '[rtl]' 'report = ""' '[rule s]' 'mechanism = swizzle' 'protect = read' \
    'on_write = count, grant-rw' >"$tmp/sw.ini"
  SWIZZLE="rtl: $tmp/sw.ini:3: warning: rule s: swizzle with protect = read moves the program's pointers between views; unmodified code that compares or subtracts them can compute something else (docs/mechanisms.md, \"swizzle, alias and auto\"): mechanism = auto is exact"
}

@test "a swizzle rule that traps, LD_PRELOAD and RTL_CONFIG only: the warning once, not once per child" {
  # sh and the three programs it starts are four processes under the
  # preload; exec'd and forked, they all inherit the mark of the first.
  run --separate-stderr env -u RTL_RTLCTL LD_PRELOAD="$PRELOAD" RTL_CONFIG="$tmp/sw.ini" \
    sh -c '/bin/true; /bin/echo out; sh -c "/bin/true"; exec /bin/true'
  assert_success
  assert_output "out"
  assert_equal "$stderr" "$SWIZZLE"
  # The same, checked: what rtlctl check says, without "rtl: ".
  run --separate-stderr "$rtlctl" check "$tmp/sw.ini"
  assert_equal "$stderr" "${SWIZZLE#rtl: }"
}

@test "started by rtlctl run the preload is quiet; the report notes the warning" {
  sed -i 's/^report = .*/report = r.json/' "$tmp/sw.ini"
  # dash ends with _exit (no report): the program's report is exec'd true's.
  run --separate-stderr "$rtlctl" run -c "$tmp/sw.ini" -- sh -c '/bin/true; exec /bin/true'
  assert_success
  refute_output --partial "warning"
  [[ $stderr != *warning* ]] || fail "stderr: $stderr"
  run report_get "$tmp/r.json" '[n for n in r["notes"] if n.startswith("policy warning")]'
  assert_output "['policy warning (rtlctl check $tmp/sw.ini): rule s: swizzle with protect = read moves the program\\'s pointers between views; unmodified code that compares or subtracts them can compute something else (docs/mechanisms.md, \"swizzle, alias and auto\"): mechanism = auto is exact']"
}

@test "a rule that selects nothing: said by rtlctl check and by the preload" {
  # narrow's sizes are all wide's; parse-all is not parse's, which
  # looks at the site.
  printf '%s\n' '[rtl]' 'report = ""' '[rule wide]' 'size = 16..4K' '[rule narrow]' \
    'size = 100..200' '[rule parse]' 'size = 8K' 'site = *parse*' \
    '[rule parse-all]' 'size = 8K..16K' >"$tmp/shadow.ini"
  want="$tmp/shadow.ini:5: warning: rule narrow: selects nothing: rule wide (line 3) comes first and takes every allocation it would (the first match wins)"
  run --separate-stderr "$rtlctl" check "$tmp/shadow.ini"
  assert_success
  assert_output "$tmp/shadow.ini: ok, 4 rules"
  assert_equal "$stderr" "$want"
  run --separate-stderr env -u RTL_RTLCTL LD_PRELOAD="$PRELOAD" RTL_CONFIG="$tmp/shadow.ini" /bin/true
  assert_success
  assert_equal "$stderr" "rtl: $want"
}

@test "RTL_WARNED names the policy said: another policy's warnings are still said" {
  printf '%s\n' '[rtl]' 'report = ""' '[rule a]' '[rule b]' 'size = 8' >"$tmp/other.ini"
  run --separate-stderr env -u RTL_RTLCTL LD_PRELOAD="$PRELOAD" RTL_CONFIG="$tmp/sw.ini" \
    sh -c 'RTL_CONFIG="$1" /bin/true; /bin/true' sh "$tmp/other.ini"
  assert_success
  assert_equal "${#stderr_lines[@]}" 2
  assert_equal "${stderr_lines[0]}" "$SWIZZLE"
  assert_equal "${stderr_lines[1]}" "rtl: $tmp/other.ini:4: warning: rule b: selects nothing: rule a (line 3) comes first and takes every allocation it would (the first match wins)"
  # A policy without warnings says nothing, and leaves no mark.
  printf '%s\n' '[rtl]' 'report = ""' '[rule a]' 'size = 100' >"$tmp/fine.ini"
  run --separate-stderr env -u RTL_RTLCTL LD_PRELOAD="$PRELOAD" RTL_CONFIG="$tmp/fine.ini" \
    sh -c 'env | grep -c ^RTL_WARNED= || true'
  assert_equal "$stderr" ""
  assert_output 0
}
