#!/usr/bin/env bats
# make deb: the Debian packages build, hold what docs/install.md says, pass
# lintian without an error, and what they install runs a real program
# under the preload (the packages unpacked, not installed: the machine's
# own folders stay as they were).

bats_require_minimum_version 1.5.0
load helpers

# Built once for the file: dpkg-buildpackage and lintian take a minute.
setup_file() {
  [[ -z ${RTL_SANITIZE_CFLAGS:-} && -z ${RTL_RUN:-} ]] && command -v dpkg-buildpackage >/dev/null ||
    return 0
  export DEB_OUT=$BATS_FILE_TMPDIR/deb
  "$top/scripts/deb.sh" "$DEB_OUT" >"$BATS_FILE_TMPDIR/deb.log" 2>&1 || true
}

setup() {
  [[ -z ${RTL_SANITIZE_CFLAGS:-} ]] || skip "packages are built without sanitizers"
  needs_native "the packages are this machine's programs"
  command -v dpkg-buildpackage >/dev/null || skip "dpkg-dev not installed (scripts/deps.sh deb)"
  version=$(sed -n "s/^  version : '\(.*\)',$/\1/p" "$top/meson.build")
  arch=$(dpkg --print-architecture)
  triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
}

deb() { echo "$DEB_OUT/${1}_${version}_$arch.deb"; }

contents() { dpkg-deb --contents "$(deb "$1")" | awk '{ print $6 }' | sed 's|^\./|/|'; }

@test "deb: three packages of meson's version, built and lintian-clean" {
  run cat "$BATS_FILE_TMPDIR/deb.log"
  for p in librtl0 librtl-dev rtl-tools; do
    assert_file_exist "$(deb "$p")"
  done
  assert_file_exist "$DEB_OUT/lintian.txt"
  run grep '^E: ' "$DEB_OUT/lintian.txt"
  assert_failure
  # The package's own check ran the built rtlctl under the preload.
  run grep -c '"rtl_version": "'"$version"'"' "$DEB_OUT/build.log"
  assert_output 1
}

@test "deb: librtl0 holds the libraries, librtl-dev the headers, links and .pc files" {
  run contents librtl0
  assert_line "/usr/lib/$triplet/librtl.so.$version"
  assert_line "/usr/lib/$triplet/librtl-interpose.so.$version"
  refute_line --regexp '\.so$|include|pkgconfig|bin/'
  run contents librtl-dev
  assert_line /usr/include/rtl/region.h
  assert_line /usr/include/rtl/region.hpp
  assert_line "/usr/lib/$triplet/pkgconfig/rtl.pc"
  assert_line "/usr/lib/$triplet/pkgconfig/rtl-interpose.pc"
  run dpkg-deb --contents "$(deb librtl-dev)"
  assert_output --regexp "librtl\.so -> librtl\.so\.0"
  run dpkg-deb -f "$(deb librtl-dev)" Depends
  assert_output --partial "librtl0 (= $version)"
  # Capstone is loaded with dlopen: a dependency all the same.
  run dpkg-deb -f "$(deb librtl0)" Depends
  assert_output --regexp "libcapstone[0-9]"
}

@test "deb: rtl-tools holds rtlctl, the preload, the self-test, man pages, completion, policies" {
  run contents rtl-tools
  for f in /usr/bin/rtlctl "/usr/lib/$triplet/rtl/librtlpreload.so" /usr/libexec/rtl/rtl-selftest \
    /usr/share/man/man1/rtlctl.1.gz /usr/share/man/man3/librtl.3.gz \
    /usr/share/man/man5/rtl-policy.5.gz /usr/share/man/man7/rtl-preload.7.gz \
    /usr/share/bash-completion/completions/rtlctl \
    /usr/share/rtl/policies/watch-writes.ini /usr/share/rtl/policies/page-baseline.ini; do
    assert_line "$f"
  done
  run dpkg-deb -f "$(deb rtl-tools)" Depends
  assert_output --regexp "librtl0 \(= $version\).*libcapstone"
}

# Unpack librtl0 and rtl-tools into one folder, as dpkg would install them.
unpack() {
  root=$BATS_TEST_TMPDIR/root
  dpkg-deb -x "$(deb librtl0)" "$root"
  dpkg-deb -x "$(deb rtl-tools)" "$root"
}

@test "deb: no RUNPATH in what the packages install (the system's folders need none)" {
  unpack
  for f in "$root/usr/lib/$triplet/rtl/librtlpreload.so" "$root/usr/lib/$triplet/librtl-interpose.so.$version" \
    "$root/usr/libexec/rtl/rtl-selftest" "$root/usr/bin/rtlctl"; do
    run readelf -d "$f"
    assert_success
    refute_output --regexp 'RUNPATH|RPATH'
  done
}

@test "deb: the unpacked rtlctl runs sqlite3 under an example policy, output unchanged" {
  command -v sqlite3 >/dev/null || skip "sqlite3 not installed"
  unpack
  cd "$BATS_TEST_TMPDIR"
  sql='create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000)
       insert into t select x, printf("row %d", x) from c; create index i on t(b);
       select count(*), sum(a), max(b) from t where b like "row 1%";'
  sqlite3 :memory: "$sql" >plain.out
  run --separate-stderr env -u RTL_PRELOAD -u RTL_RTLCTL LD_LIBRARY_PATH="$root/usr/lib/$triplet" \
    "$root/usr/bin/rtlctl" run -c "$root/usr/share/rtl/policies/watch-writes.ini" -o r.json -- \
    sqlite3 :memory: "$sql"
  assert_success
  assert_output "$(cat plain.out)"
  run python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(r["rtl_version"], r["totals"]["selected"] > 0, r["totals"]["write_traps"] > 0)' r.json
  assert_output "$version True True"
  # It used the unpacked preload, found relative to the unpacked rtlctl.
  run env -u RTL_PRELOAD LD_LIBRARY_PATH="$root/usr/lib/$triplet" "$root/usr/bin/rtlctl" run -o '' -- \
    printenv LD_PRELOAD
  assert_success
  assert_equal "$(realpath "$output")" "$root/usr/lib/$triplet/rtl/librtlpreload.so"
}

@test "deb: man rtlctl reads the packaged page" {
  unpack
  run env MANWIDTH=80 man -l "$root/usr/share/man/man1/rtlctl.1.gz"
  assert_success
  assert_output --partial "rtlctl run"
  assert_output --partial "$version"
}
