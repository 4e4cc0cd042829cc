#!/usr/bin/env bats
# The installed tree runs wherever it lands: meson install into a staging
# folder, the tree moved elsewhere, then rtlctl run, the preload on its own
# and rtlctl selftest from there (docs/install.md). And rtlctl run refuses
# a preload the loader cannot load, before the program starts.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  tmp=$BATS_TEST_TMPDIR
  printf '[rtl]\nreport = %s/reports/%%e.%%p.json\n[rule all]\n' "$tmp" >"$tmp/p.ini"
  mkdir -p "$tmp/reports"
}

# Install the build into $tmp/stage, then move the prefix to $tmp/moved:
# nothing may still point at the prefix meson was configured with.
install_moved() {
  meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/stage" >"$tmp/install.log" 2>&1 ||
    fail "meson install failed: $(cat "$tmp/install.log")"
  local exe
  exe=$(find "$tmp/stage" -path '*/bin/rtlctl')
  [[ -n $exe ]] || fail "no bin/rtlctl installed"
  mv "${exe%/bin/rtlctl}" "$tmp/moved"
  rm -rf "$tmp/stage"
  rtlctl=$tmp/moved/bin/rtlctl
  preload=$(find "$tmp/moved" -name librtlpreload.so)
}

@test "install: the preload and rtl-selftest find their libraries through \$ORIGIN" {
  needs_preload
  install_moved
  run readelf -d "$preload"
  assert_output --regexp 'RUNPATH.*\[\$ORIGIN/\.\.\]'
  run readelf -d "$(find "$tmp/moved" -name rtl-selftest)"
  assert_output --regexp 'RUNPATH.*\[\$ORIGIN/[./]*lib'
  # Every library the preload needs resolves in the moved tree.
  run ldd "$preload"
  refute_output --partial "not found"
  assert_output --partial "$tmp/moved/"
}

@test "install: rtlctl run from a moved install traces the program and writes the report" {
  needs_preload
  install_moved
  cd "$tmp"
  run --separate-stderr env -u RTL_PRELOAD "$rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- \
    bash -c 'cd /; /bin/true; echo hi'
  assert_success
  assert_output hi
  [[ $stderr != *"cannot be preloaded"* ]] || fail "$stderr"
  assert_file_exist "$tmp/r.json"
  run python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["run"]["program"], r["totals"]["allocations"] > 0)' "$tmp/r.json"
  assert_output "bash True"
}

@test "install: the moved preload on its own finds the moved rtlctl for its report" {
  needs_preload
  install_moved
  # No rtlctl run (RTL_RTLCTL unset): the preload looks beside itself, for
  # the one report it has rtlctl make as the program ends, to stderr.
  printf '[rtl]\nreport = -\n[rule all]\n' >"$tmp/stderr.ini"
  run env -u RTL_RTLCTL LD_PRELOAD="$preload" RTL_CONFIG="$tmp/stderr.ini" \
    bash -c 'cd /; exit 0'
  assert_success
  refute_output --partial "rtlctl not found"
  assert_output --partial '"rtl_report": 1'
}

@test "install: rtlctl selftest finds the moved rtl-selftest" {
  needs_preload
  install_moved
  run env -u RTL_SELFTEST "$rtlctl" selftest sweep/memcmp
  assert_success
  assert_output --partial "ok     sweep/memcmp"
}

@test "run: a preload that cannot be loaded stops rtlctl before the program, with the loader's reason" {
  needs_preload
  # Without librtl.so.0 beside it, the loader cannot load it.
  cp "$build/preload/librtlpreload.so" "$tmp/lonely.so"
  RTL_PRELOAD=$tmp/lonely.so run -127 "$build/tools/rtlctl" run -- touch "$tmp/ran"
  assert_equal "$status" 127
  assert_output "rtlctl run: $tmp/lonely.so cannot be loaded: librtl.so.0: cannot open shared object file: No such file or directory"
  assert_file_not_exist "$tmp/ran"
  RTL_PRELOAD=/etc/passwd run -127 "$build/tools/rtlctl" run -- touch "$tmp/ran"
  assert_equal "$status" 127
  assert_output --partial "rtlctl run: /etc/passwd cannot be loaded: "
  assert_file_not_exist "$tmp/ran"
}

@test "run: a relative RTL_PRELOAD is made absolute: a child in another folder is traced too" {
  needs_preload
  cd "$build"
  run --separate-stderr env RTL_PRELOAD=preload/librtlpreload.so "$build/tools/rtlctl" run \
    -c "$tmp/p.ini" -- bash -c 'cd /; /bin/true; echo "$LD_PRELOAD"'
  assert_success
  assert_output "$build/preload/librtlpreload.so"
  [[ $stderr != *"cannot be preloaded"* ]] || fail "$stderr"
  # bash and its child /bin/true are the run's two processes.
  assert_equal "$(ls "$tmp/reports" | wc -l)" 1
  assert_equal "$(report_get "$tmp"/reports/*.json 'len(r["processes"])')" 2
}

@test "a relative LD_PRELOAD: the preload still finds rtlctl after the program changed folder" {
  needs_preload
  cd "$build"
  printf '[rtl]\nreport = -\n[rule all]\n' >"$tmp/stderr.ini"
  run env -u RTL_RTLCTL LD_PRELOAD=preload/librtlpreload.so RTL_CONFIG="$tmp/stderr.ini" \
    bash -c 'cd /; exit 0'
  assert_success
  refute_output --partial "rtlctl not found"
  refute_output --partial "the report was not made"
  assert_output --partial '"rtl_report": 1'
}

@test "install: the man pages, with the version, render without a warning and cover every option" {
  install_moved
  version=$("$build/tools/rtlctl" --version | cut -d' ' -f2)
  for page in man1/rtlctl.1 man5/rtl-policy.5 man3/librtl.3 man7/rtl-preload.7; do
    f=$tmp/moved/share/man/$page
    assert_file_exist "$f"
    grep -q "\"rtl $version\"" "$f" || fail "$page: no version $version"
    run groff -man -ww -z -Tutf8 "$f"
    assert_success
    assert_output ""
  done
  text=$(groff -man -Tascii -rLL=200n "$tmp/moved/share/man/man1/rtlctl.1" | col -b)
  for cmd in run check show report init selftest; do
    grep -q "rtlctl $cmd" <<<"$text" || fail "rtlctl.1 has no rtlctl $cmd"
    for o in $("$build/tools/rtlctl" help "$cmd" | sed -n '/^Options:/,/^$/p' | grep -oE -- '--[a-z-]+'); do
      grep -qe "$o" <<<"$text" || fail "rtlctl.1 does not document $o of $cmd"
    done
    for v in $("$build/tools/rtlctl" help "$cmd" | grep -oE '\b(RTL_[A-Z_]+|TMPDIR)\b'); do
      grep -qw "$v" <<<"$text" || fail "rtlctl.1 does not document $v"
    done
  done
  # man finds them in the installed tree by name.
  run env MANPATH="$tmp/moved/share/man" man -P cat rtl-policy
  assert_success
  assert_output --partial "max_regions"
}

# Complete the words of $1 (the last one being completed) with the
# installed completion; the candidates, one a line.
complete_words() {
  bash -c '
    source "$1"
    read -ra COMP_WORDS <<<"$2"
    [[ $2 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _rtlctl
    printf "%s\n" "${COMPREPLY[@]}"
  ' _ "$tmp/moved/share/bash-completion/completions/rtlctl" "$1"
}

@test "install: bash completion of commands, options, policies and the program" {
  install_moved
  assert_file_exist "$tmp/moved/share/bash-completion/completions/rtlctl"
  run complete_words "rtlctl rep"
  assert_output report
  run complete_words "rtlctl report --"
  assert_line --csv
  assert_line --folded
  assert_line --json
  run complete_words "rtlctl report --csv "
  assert_output $'sites\nrules'
  mkdir "$tmp/w"
  cd "$tmp/w"
  touch a.ini b.txt r.json
  run complete_words "rtlctl run -c "
  assert_output a.ini
  run complete_words "rtlctl check "
  assert_output a.ini
  run complete_words "rtlctl report "
  assert_output r.json
  run complete_words "rtlctl run -c a.ini -- ech"
  assert_line echo
  run complete_words "rtlctl help sel"
  assert_output selftest
  # Every option of every command's help completes.
  for cmd in run check show report init selftest; do
    run complete_words "rtlctl $cmd --"
    for o in $("$build/tools/rtlctl" help "$cmd" | sed -n '/^Options:/,/^$/p' | grep -oE -- '--[a-z-]+'); do
      assert_line "$o"
    done
  done
}

@test "make install's script: PREFIX (and DESTDIR) without configuring meson, and the tree runs there" {
  needs_preload
  run "$top/scripts/install.sh" "$build" "$tmp/p"
  assert_success
  assert_output "rtl: installed under $tmp/p (try: $tmp/p/bin/rtlctl run -- /bin/true)"
  run --separate-stderr env -u RTL_PRELOAD "$tmp/p/bin/rtlctl" run -c "$tmp/p.ini" -o "$tmp/r.json" -- /bin/true
  assert_success
  assert_file_exist "$tmp/r.json"
  DESTDIR=$tmp/stage run "$top/scripts/install.sh" "$build" /opt/rtl
  assert_success
  assert_file_exist "$tmp/stage/opt/rtl/bin/rtlctl"
  run "$top/scripts/install.sh" "$build" relative/dir
  assert_equal "$status" 2
  assert_output "install: PREFIX must be absolute: relative/dir"
  # The Makefile's target is this script.
  run make -s -n -C "$top" install PREFIX=/x BUILD=b
  assert_line --partial "scripts/install.sh b /x"
}
