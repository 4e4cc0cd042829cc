#!/usr/bin/env bats
# What rtlctl says about itself: --version (and the version in reports),
# rtlctl help CMD and CMD --help with every option and the environment,
# errors prefixed with the command, getopt_long's forms for every command.

bats_require_minimum_version 1.5.0
load helpers

commands="run check show report init selftest"

setup() {
  tmp=$BATS_TEST_TMPDIR
}

@test "--version prints meson's project version" {
  version=$(sed -n "s/^  version : '\([^']*\)',/\1/p" "$top/meson.build")
  [[ -n $version ]]
  run "$rtlctl" --version
  assert_success
  assert_output "rtlctl $version"
  run "$rtlctl" --help
  assert_line --partial "rtlctl $version:"
}

@test "a report carries the version of the rtlctl that made it" {
  needs_preload
  printf '[rule all]\n' >"$tmp/p.ini"
  "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- /bin/true 2>/dev/null
  run python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["rtl_version"])' "$tmp/r.json"
  assert_output "$("$rtlctl" --version | cut -d' ' -f2)"
}

@test "rtlctl help CMD is CMD --help: usage, options, and exit 0" {
  for cmd in $commands; do
    run "$rtlctl" help "$cmd"
    assert_success
    assert_line --index 0 --regexp "^usage: rtlctl $cmd"
    assert_line "Options:"
    assert_line --regexp '^  -h, --help +this help$'
    help=$output
    run "$rtlctl" "$cmd" --help
    assert_success
    assert_equal "$output" "$help"
    run "$rtlctl" "$cmd" -h
    assert_equal "$output" "$help"
  done
  run "$rtlctl" help nosuch
  assert_equal "$status" 2
  assert_output --partial "rtlctl help: unknown command 'nosuch'"
}

# The long options in a source file's getopt_long tables.
long_options() {
  grep -oE '^\s*\{ "[a-z-]+", (no|required|optional)_argument' "$1" | sed -E 's/^\s*\{ "([a-z-]+)".*/\1/'
}

@test "every option a command parses is in its help" {
  for pair in run:cmd_run.c report:cmd_report.c selftest:cmd_selftest.c \
    check:cmd_policy.c show:cmd_policy.c init:cmd_policy.c; do
    cmd=${pair%%:*}
    opts=$(long_options "$top/tools/rtlctl/${pair#*:}")
    [[ -n $opts ]] || fail "no getopt_long table in ${pair#*:}"
    help=$("$rtlctl" help "$cmd")
    for o in $opts; do
      grep -qE -- "--$o\b" <<<"$help" || fail "rtlctl help $cmd does not list --$o"
    done
  done
}

@test "every environment variable rtl reads is in rtlctl's help" {
  help="$("$rtlctl" help run) $("$rtlctl" help selftest) $("$rtlctl" help report)"
  vars=$(grep -rhoE 'getenv\("[A-Z_]+"\)' "$top"/{core,interpose,preload,policy,tools} |
    sed -E 's/.*\("([A-Z_]+)"\)/\1/' | sort -u)
  [[ $vars == *RTL_ARENA_SIZE* ]]
  for v in $vars; do
    # GLIBC_TUNABLES is glibc's; RTL_SECCOMP is the filter's note to itself
    # across exec (interpose/sigsys.c), not a setting.
    [[ $v == GLIBC_TUNABLES ]] && continue
    grep -qw "$v" <<<"$help" || fail "$v is read but not in rtlctl help"
  done
  grep -qw RTL_SECCOMP <<<"$help" && fail "RTL_SECCOMP is internal"
  true
}

@test "usage errors name the command and end with its usage line, exit 2" {
  for cmd in $commands; do
    for bad in --bogus -Z; do
      run --separate-stderr "$rtlctl" "$cmd" "$bad"
      assert_equal "$status" 2
      assert_equal "${stderr_lines[0]}" "rtlctl $cmd: unknown option '$bad'"
      assert_equal "${stderr_lines[1]}" "$("$rtlctl" help "$cmd" | head -n 1)"
    done
  done
  run --separate-stderr "$rtlctl" report -o
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl report: option '-o' needs an argument"
  run --separate-stderr "$rtlctl" run --config
  assert_equal "${stderr_lines[0]}" "rtlctl run: option '--config' needs an argument"
  run --separate-stderr "$rtlctl" check a.ini b.ini
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl check: one policy file at a time ('b.ini' is one too many)"
  run --separate-stderr "$rtlctl" report
  assert_equal "${stderr_lines[0]}" "rtlctl report: no report given"
}

@test "a report that cannot be opened: FILE: cannot open: the reason" {
  run "$rtlctl" report "$tmp/missing.json"
  assert_equal "$status" 1
  assert_output "rtlctl report: $tmp/missing.json: cannot open: No such file or directory"
  run "$rtlctl" report --json "$tmp/missing.json"
  assert_output "rtlctl report: $tmp/missing.json: cannot open: No such file or directory"
}

@test "getopt_long's forms: --opt=value, options after the file, -- before a dash name" {
  sample=$top/tests/reports/sample.json
  run "$rtlctl" report "$sample" --json
  assert_success
  python3 -c 'import json, sys; json.loads(sys.stdin.read())' <<<"$output"
  run "$rtlctl" report --json --output="$tmp/out.json" "$sample"
  assert_success
  assert_file_exist "$tmp/out.json"
  cp "$top/tests/policies/good/minimal.ini" "$tmp/-odd.ini"
  cd "$tmp"
  run "$rtlctl" check -- -odd.ini
  assert_success
  assert_output "-odd.ini: ok, 1 rule"
  run "$rtlctl" init -- -new.ini
  assert_success
  assert_file_exist "$tmp/-new.ini"
}
