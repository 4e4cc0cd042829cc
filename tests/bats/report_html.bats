#!/usr/bin/env bats
# The HTML pages (docs/report.md): rtlctl report --html, report --diff
# --html and compare --html, each opened in headless Chromium (Debian's
# chromium, which `scripts/deps.sh test` installs), its screenshot taken
# and its DOM dumped after the page drew itself; tests/reports/
# check_page.py reads the DOM back against the JSON the page was made
# from: the timeline, the flame graph and the tables drawn, with the
# run's numbers.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  tmp=$BATS_TEST_TMPDIR
  command -v chromium >/dev/null ||
    skip "chromium is not installed (scripts/deps.sh test installs it)"
  [[ -r ${RTL_D3:-/usr/share/nodejs/d3/dist/d3.min.js} ]] ||
    skip "d3 is not installed (node-d3: scripts/deps.sh build installs it)"
  SQL="create table t(a, b); with recursive n(x) as (select 1 union all select x + 1 from n where x < 3000) insert into t select x, printf('v%d', x) from n; select count(*), sum(a) from t;"
  POLICY=$top/examples/policies/watch-writes.ini
}

# browse PAGE [#FRAGMENT]: open PAGE in headless Chromium; its screenshot
# in $tmp/shot.png, its DOM in $tmp/dom.html. html.md's flags: no network,
# no profile of the user's, no GPU, no sandbox (root in CI).
browse() {
  local profile
  profile=$(mktemp -d "$tmp/chromium.XXXXXX")
  rm -f "$tmp/shot.png" "$tmp/dom.html"
  timeout -s KILL 120 chromium --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --disable-dev-shm-usage --hide-scrollbars \
    --user-data-dir="$profile" --window-size=1200,1600 \
    --screenshot="$tmp/shot.png" --dump-dom "file://$1${2:-}" >"$tmp/dom.html" 2>"$tmp/chromium.err" ||
    fail "chromium: $(tail -n 5 "$tmp/chromium.err")"
  rm -rf "$profile"
  assert_file_exist "$tmp/shot.png"
  # A whole PNG of the window's size, not one colour.
  python3 - "$tmp/shot.png" <<'PY' || fail "the screenshot is not a whole PNG"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", data[16:24])
assert (w, h) == (1200, 1600), (w, h)
at, idat = 8, b""
while at < len(data):
    n, kind = struct.unpack(">I4s", data[at:at + 8])
    if kind == b"IDAT":
        idat += data[at + 8:at + 8 + n]
    at += 12 + n
assert len(set(zlib.decompress(idat))) > 16
PY
}

# A real run: sqlite3 under watch-writes (its first write to each small
# block counted, with its backtrace), report $tmp/r.json.
sqlite_run() {
  needs_preload
  run "$rtlctl" run -c "$POLICY" -o "$tmp/r.json" -- sqlite3 :memory: "$SQL"
  assert_success
  assert_line "3000|4501500"
}

@test "report --html of sqlite3 under watch-writes: timeline, flame graph and tables drawn with the run's numbers" {
  sqlite_run
  run "$rtlctl" report --html "$tmp/r.html" "$tmp/r.json"
  assert_success
  assert_output ""
  # One file that fetches nothing: no src= or href= to anywhere.
  run grep -cE '<(script|link|img)[^>]* (src|href)=' "$tmp/r.html"
  assert_output 0
  browse "$tmp/r.html"
  run "$top/tests/reports/check_page.py" report "$tmp/dom.html" "$tmp/r.json"
  assert_output ok
  # The page of the raw record is the page of its report.
  assert_equal "$(stat -c %a "$tmp/r.html")" 600
}

@test "the page's tables sort by any column: #sort=TABLE:COLUMN:ORDER in the address" {
  sqlite_run
  "$rtlctl" report --html "$tmp/r.html" "$tmp/r.json"
  browse "$tmp/r.html" "#sort=sites-table:regions:asc"
  run "$top/tests/reports/check_page.py" sorted "$tmp/dom.html" sites-table 3 asc
  assert_output ok
  browse "$tmp/r.html" "#sort=sites-table:bytes:desc"
  run "$top/tests/reports/check_page.py" sorted "$tmp/dom.html" sites-table 4 desc
  assert_output ok
}

@test "compare --html: page and regions side by side, each run's timeline and traps per site" {
  needs_preload
  run "$rtlctl" compare -c "$POLICY" -o "$tmp/cmp" --html "$tmp/c.html" -- sqlite3 :memory: "$SQL"
  assert_success
  assert_line "page: $tmp/c.html"
  browse "$tmp/c.html"
  run "$top/tests/reports/check_page.py" compare "$tmp/dom.html" "$tmp/cmp"
  assert_output ok
}

@test "report --diff --html: the change per rule and site, A and B side by side" {
  needs_preload
  printf '%s\n' '[rule a]' 'size = 100' 'protect = none' >"$tmp/a.ini"
  cat "$tmp/a.ini" - >"$tmp/b.ini" <<<$'[rule b]\nsize = 200\nprotect = none'
  for p in a b; do
    "$rtlctl" run -c "$tmp/$p.ini" -o "$tmp/$p.json" -- "$PROGS/access" 20 5 rw >/dev/null 2>&1
  done
  run "$rtlctl" report --diff --html "$tmp/d.html" "$tmp/a.json" "$tmp/b.json"
  assert_success
  "$rtlctl" report --diff --json "$tmp/a.json" "$tmp/b.json" >"$tmp/d.json"
  browse "$tmp/d.html"
  run "$top/tests/reports/check_page.py" diff "$tmp/dom.html" "$tmp/d.json"
  assert_output ok
}

@test "a string of the report cannot end the page's script: it shows as text" {
  python3 - "$top/tests/reports/sample.json" "$tmp/x.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["sites"][0]["site"] = r["sites"][0]["demangled"] = \
    'lib!</script><script id="injected">document.body.dataset.rendered="pwned"</script><!--<script>'
json.dump(r, open(sys.argv[2], "w"))
PY
  run "$rtlctl" report --html "$tmp/x.html" "$tmp/x.json"
  assert_success
  run grep -c '</script' "$tmp/x.html"
  assert_output 3 # the three the page has: data, d3, its own
  browse "$tmp/x.html"
  run "$top/tests/reports/check_page.py" text "$tmp/dom.html" \
    'lib!</script><script id="injected">document.body.dataset.rendered="pwned"</script><!--<script>'
  assert_output ok
}

@test "--html without d3, or with a d3 that would end its script: a clear error, no page" {
  sample=$top/tests/reports/sample.json
  RTL_D3=$tmp/none.js run --separate-stderr "$rtlctl" report --html "$tmp/p.html" "$sample"
  assert_equal "$status" 3
  assert_equal "$stderr" "rtlctl report: no HTML page: cannot read d3 from $tmp/none.js: No such file or directory (install Debian's node-d3, or set RTL_D3)"
  printf 'var d3 = 1; // </SCRIPT>\n' >"$tmp/bad.js"
  RTL_D3=$tmp/bad.js run --separate-stderr "$rtlctl" report --html "$tmp/p.html" "$sample"
  assert_equal "$status" 3
  assert_equal "$stderr" "rtlctl report: no HTML page: $tmp/bad.js holds \"</script\" or a NUL byte: it cannot be inlined"
  assert_file_not_exist "$tmp/p.html"
  run ls -A "$tmp"
  refute_output --partial ".tmp"
  run --separate-stderr "$rtlctl" report --html "$tmp/p.html" --json "$sample"
  assert_equal "$status" 2
  assert_equal "${stderr_lines[0]}" "rtlctl report: one of --json, --csv, --folded, --plot, --html and --trace at a time"
  run --separate-stderr "$rtlctl" report --html "$tmp/no/such/dir/p.html" "$sample"
  assert_equal "$status" 3
  assert_equal "$stderr" "rtlctl report: no HTML page written to $tmp/no/such/dir/p.html: No such file or directory"
}
