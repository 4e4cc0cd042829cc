#!/usr/bin/env bash
# The pictures at the top of docs/report.md: the HTML page of a real run
# (sqlite3 under examples/policies/watch-writes.ini) and of a comparison
# of the same run under page and region protection, each drawn by
# headless Chromium as tests/bats/report_html.bats draws them.
# Usage: scripts/report-pictures.sh [BUILD]   (default: build)
# Writes docs/img/report.png and docs/img/compare.png (1200 x 1600).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rtlctl=$build/tools/rtlctl
for tool in chromium sqlite3 "$rtlctl"; do
  command -v "$tool" >/dev/null || {
    echo "report-pictures.sh: no $tool (scripts/deps.sh build test; make build)" >&2
    exit 1
  }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
policy=examples/policies/watch-writes.ini
sql="create table t(a integer primary key, b text, c text);
with recursive n(x) as (select 1 union all select x + 1 from n where x < 4000)
insert into t select x, printf('row-%08x', x * 2654435761 % 4294967296), printf('%.*c', x % 90, 'x') from n;
create index tb on t(b);
select count(*), sum(length(c)) from t where b like 'row-1%';
select substr(b, 5, 1) as k, count(*) from t group by k order by k limit 3;"

# shot PAGE PNG: the page as a 1200 x 1600 window shows it.
shot() {
  local profile
  profile=$(mktemp -d "$work/chromium.XXXXXX")
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$profile" \
    --window-size=1200,1600 --screenshot="$2" --dump-dom "file://$1" >"$work/dom.html" 2>/dev/null
  grep -q 'data-rendered="ok"' "$work/dom.html" || {
    echo "report-pictures.sh: $1 did not draw" >&2
    exit 1
  }
}

mkdir -p docs/img
top=$(pwd)
rtlctl=$(realpath "$rtlctl")
policy=$top/$policy
# In the work folder: the page shows "sqlite3 db ...".
(cd "$work" && "$rtlctl" run -c "$policy" -o r.json -- sqlite3 db "$sql" >/dev/null 2>&1)
"$rtlctl" report --html "$work/report.html" "$work/r.json"
shot "$work/report.html" docs/img/report.png
rm -f "$work/db"
(cd "$work" && "$rtlctl" compare -c "$policy" -o cmp --outputs db --html compare.html -- \
  sqlite3 db "$sql" >/dev/null 2>&1)
shot "$work/compare.html" docs/img/compare.png
echo "docs/img/report.png docs/img/compare.png"
