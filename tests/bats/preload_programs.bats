#!/usr/bin/env bats
# Real programs under the preload: each runs without it, with it selecting
# nothing, everything (protect = rw) and a size range (64..4K); stdout,
# stderr and exit status must be byte-identical, and the selecting runs
# must have made regions (their reports count them).

load helpers

setup() {
  preload_setup
}

@test "python3: dicts, lists, strings, a forked and a spawned subprocess" {
  cat >"$BATS_TEST_TMPDIR/t.py" <<'PY'
import json, os, subprocess, sys
d = {f"key{i}": [i, str(i) * 3, {"n": i % 7}] for i in range(20000)}
s = "".join(chr(65 + i % 26) for i in range(100000))
words = sorted(set(s[i:i + 5] for i in range(0, len(s), 3)))
print(len(json.dumps(d)), len(words), words[:3], s.count("XYZ"))
r = subprocess.run([sys.executable, "-c", "print(sum(range(10**5)))"],
                   capture_output=True, text=True)
print("spawned:", r.stdout.strip(), r.returncode)
pid = os.fork()
if pid == 0:
    d.clear()
    os._exit(len(d) + 3)
_, st = os.waitpid(pid, 0)
print("forked child exit:", os.WEXITSTATUS(st), "parent still has", len(d))
sys.exit(5)
PY
  export PYTHONHASHSEED=0
  compare_runs /usr/bin/python3 "$BATS_TEST_TMPDIR/t.py"
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/all.rc")" 5
  # Parent, spawned child and forked child report (the last one _exits).
  [[ $(report_count all) -ge 2 ]]
}

@test "sqlite3: a table of 10^4 rows, inserted and queried" {
  sql='create table t(a integer primary key, b text, c real);
with recursive n(x) as (select 1 union all select x + 1 from n where x < 10000)
insert into t select x, printf("row-%08x", x * 2654435761 % 4294967296), x / 7.0 from n;
create index tb on t(b);
select count(*), sum(a), min(b), max(b), round(sum(c), 3) from t;
select a, b from t where b like "row-0%" order by b limit 5;
select a % 10 as k, count(*) from t group by k order by k;'
  compare_runs sqlite3 :memory: "$sql"
  assert_equal "$(head -c 10 "$BATS_TEST_TMPDIR/runs/all.out")" "10000|5000"
}

@test "gzip and gunzip: round trip of a 20 MB file" {
  data=$BATS_TEST_TMPDIR/data
  seq 1 3000000 | head -c 20000000 >"$data"
  compare_runs sh -c 'gzip -n -c "$1" | tee z.gz | gunzip -c | cmp - "$1" &&
    md5sum <z.gz && wc -c <z.gz' sh "$data"
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/all.rc")" 0
}

@test "git: init, commit, log in a temporary directory" {
  export HOME=$BATS_TEST_TMPDIR GIT_CONFIG_NOSYSTEM=1 GIT_PAGER=cat
  export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.org
  export GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.org
  export GIT_AUTHOR_DATE='2024-01-02T03:04:05Z' GIT_COMMITTER_DATE='2024-01-02T03:04:05Z'
  compare_runs sh -c 'git -c init.defaultBranch=main init -q repo && cd repo &&
    seq 1 5000 >numbers && printf "hello\n" >greeting &&
    git add . && git commit -q -m first &&
    seq 2 2 5000 >numbers && git commit -q -a -m second &&
    git log --stat --format="%H %an %s" && git show --format=%T HEAD~1 | head -3 &&
    git status --short && git cat-file -p HEAD:greeting'
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/all.rc")" 0
  grep -q ' A second$' "$BATS_TEST_TMPDIR/runs/all.out"
}

@test "perl: a hash-heavy one-liner" {
  compare_runs perl -e 'my %h; $h{"k$_"} = [$_, "v" x ($_ % 50)] for 1 .. 100000;
    delete $h{"k$_"} for grep { $_ % 3 == 0 } 1 .. 100000;
    my $n = 0; $n += length $h{$_}[1] for keys %h;
    print scalar(keys %h), " $n ", join(",", (sort keys %h)[0 .. 4]), "\n"; exit 3'
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/all.rc")" 3
}

@test "bash: command substitution, pipes, subshells" {
  compare_runs bash -c 'x=$(seq 100 | awk "{s += \$1} END {print s}")
    echo "sum $x $(seq 10 | paste -sd+)"
    f() { echo $(( $1 * 2 )); }
    echo "double $(f 21) nested $(echo $(echo $(f 4)))"
    (cd / && pwd)
    echo "a b c" | tr a-z A-Z | sed s/B/bee/ | tr " " "\n" | sort -r | paste -sd:
    { for i in 1 2 3 4 5 6; do (echo "sub $i $((i * i))") & done; wait; } | sort
    declare -A m; for k in $(seq 500); do m[k$k]=$((k * 3)); done; echo "assoc ${#m[@]} ${m[k250]}"
    s=""; for i in $(seq 2000); do s+="$i,"; done; echo "${#s}"
    exit 7'
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/all.rc")" 7
  assert_equal "$(head -n 1 "$BATS_TEST_TMPDIR/runs/all.out")" "sum 5050 1+2+3+4+5+6+7+8+9+10"
  [[ $(report_count all) -ge 3 ]] # the shell and its subshells
}
