#!/usr/bin/env bats
# System calls on region memory under the preload (docs/syscalls.md): real
# programs whose I/O buffers are selected and protected read-only, with the
# swizzle mechanism and with alias, compared byte for byte with a run
# without the preload. The reports must show that selected regions trapped
# and that system calls were handed region buffers (syscall_buffers).
#
# The selections are the programs' I/O buffers: Python's buffered-I/O
# buffers are the file's st_blksize (4 KiB on ext4) or io.DEFAULT_BUFFER_SIZE
# (8 KiB), sqlite's page buffers 4 KiB pages plus their headers; alias and
# the C programs take everything from 1 KiB up.
# Where swizzle cannot keep a program byte-identical (Python's bytes.join
# on a small selected block), docs/mechanisms.md says why; GNU sort's buffer
# is a block of whole pages, which swizzle protects in place.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  preload_setup
  policy sw-io '[rule io]' 'size = 4K..8K' 'protect = read'
  policy sw-all '[rule io]' 'size = 1K..' 'protect = read'
  policy alias '[rule io]' 'size = 1K..' 'mechanism = alias' 'protect = read'
}

# in_place MODE PROGRAM: whether auto's blocks of whole pages were
# protected in place in rtl's views (the mprotect backend) for PROGRAM,
# rather than in the copy of such blocks (page-table protection): 1 or 0.
in_place() {
  python3 - "$REP/$1" "$2" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*.json*"):
    r = json.load(open(f))
    if r["run"]["program"] == sys.argv[2] and "protection" in r:
        print(int(r["protection"]["backend"] == "mprotect"))
        break
else:
    print(1)
PY
}

# sum_of MODE PROGRAM FIELD: totals.FIELD over MODE's reports of PROGRAM.
sum_of() {
  python3 - "$REP/$1" "$2" "$3" <<'PY'
import glob, json, sys
n = 0
for f in glob.glob(sys.argv[1] + "/*.json*"):
    r = json.load(open(f))
    if r["run"]["program"] == sys.argv[2]:
        n += r["totals"][sys.argv[3]]
print(n)
PY
}

@test "python3: files written and read back, a subprocess pipe, under swizzle and alias" {
  cat >"$BATS_TEST_TMPDIR/t.py" <<'PY'
import hashlib, subprocess, sys
data = b"".join(b"line %d of the file %s\n" % (i, b"x" * (i % 50)) for i in range(40000))
with open("f.bin", "wb") as f:
    f.write(data)
with open("f.bin", "rb") as f:
    back = f.read()
chunks = []
with open("f.bin", "rb") as f:
    while c := f.read(3000):
        chunks.append(c)
with open("f.txt", "w") as f:
    for i in range(5000):
        f.write("text %d\n" % i)
with open("f.txt") as f:
    lines = f.readlines()
p = subprocess.run(["sort", "-r"], input=data[:200000], capture_output=True)
q = subprocess.Popen([sys.executable, "-c",
                      "import sys; d = sys.stdin.buffer.read(); sys.stdout.buffer.write(d[::-1])"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out, _ = q.communicate(data[:100000])
print(len(back), back == data, b"".join(chunks) == data, len(lines), lines[-1].strip(),
      hashlib.md5(p.stdout).hexdigest(), out == data[:100000][::-1], p.returncode, q.returncode)
PY
  for m in none sw-io alias; do
    run_mode "$m" /usr/bin/python3 "$BATS_TEST_TMPDIR/t.py"
  done
  same_as_without sw-io alias
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_output --partial "1928890 True True 5000 text 4999"
  for m in sw-io alias; do
    [[ $(sum_of "$m" python3 write_traps) -gt 0 ]]
    [[ $(sum_of "$m" python3 syscall_buffers) -gt 0 ]]
  done
  # Under alias the sort child's buffer is a region too, read by fread.
  [[ $(sum_of alias sort syscall_buffers) -gt 0 ]]
}

@test "sqlite3: a database file written and read back, under swizzle and alias" {
  cat >"$BATS_TEST_TMPDIR/q.sql" <<'SQL'
create table t(a integer primary key, b text, c blob);
with recursive n(x) as (select 1 union all select x + 1 from n where x < 20000)
insert into t select x, printf("row-%08x", x * 2654435761 % 4294967296), zeroblob(x % 300) from n;
create index tb on t(b);
select count(*), sum(a), min(b), max(b), sum(length(c)) from t;
select a, b from t where b like "row-0%" order by b limit 5;
SQL
  for m in none sw-io sw-all alias; do
    run_mode "$m" sh -c 'sqlite3 db.sqlite <"$1" &&
      sqlite3 db.sqlite "select count(*), sum(length(c)) from t; pragma integrity_check;"' \
      sh "$BATS_TEST_TMPDIR/q.sql"
  done
  same_as_without sw-io sw-all alias
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "20000|2980200"
  assert_line ok
  for m in sw-io sw-all alias; do
    [[ $(sum_of "$m" sqlite3 write_traps) -gt 0 ]]
    [[ $(sum_of "$m" sqlite3 syscall_buffers) -gt 0 ]]
  done
}

@test "gzip and gunzip: a round trip under swizzle and alias" {
  data=$BATS_TEST_TMPDIR/data
  seq 1 1000000 | head -c 5000000 >"$data"
  for m in none sw-all alias; do
    run_mode "$m" sh -c 'gzip -n -c "$1" | tee z.gz | gunzip -c | cmp - "$1" &&
      md5sum <z.gz && wc -c <z.gz' sh "$data"
  done
  same_as_without sw-all alias
  assert_equal "$(cat "$BATS_TEST_TMPDIR/runs/none.rc")" 0
  # gzip's own I/O buffers are static arrays, never heap blocks: its
  # system calls touch no region. gunzip's tables are regions; cmp and
  # md5sum read into region buffers.
  for m in sw-all alias; do
    [[ $(sum_of "$m" gzip selected) -gt 0 ]]
    [[ $(sum_of "$m" cmp syscall_buffers) -gt 0 ]]
    [[ $(sum_of "$m" md5sum syscall_buffers) -gt 0 ]]
  done
}

@test "sort of a 50 MB file under swizzle and alias: its buffer a region, filled by fread" {
  big=$BATS_TEST_TMPDIR/big.txt
  seq 1 9000000 | awk '{print ($1 * 7919) % 1000003, "line", $1}' | head -c 50000000 >"$big"
  for m in none sw-all alias; do
    run_mode "$m" sh -c 'sort "$1" >sorted; md5sum <sorted; wc -l <sorted' sh "$big"
  done
  same_as_without sw-all alias
  for m in sw-all alias; do
    [[ $(sum_of "$m" sort selected) -gt 0 ]]
    [[ $(sum_of "$m" sort write_traps) -gt 0 ]]
    [[ $(sum_of "$m" sort syscall_buffers) -gt 0 ]]
  done
  # Under auto the buffer is a block of whole pages, protected by its own
  # pages (in place in rtl's views under mprotect, in the copy of such
  # blocks under page tables): no pointer of sort's moved.
  if (($(in_place sw-all sort))); then
    [[ $(sum_of sw-all sort in_place_protects) -gt 0 ]]
  else
    [[ $(sum_of sw-all sort in_place_protects) -eq 0 ]]
  fi
  [[ $(sum_of sw-all sort stale_traps) -eq 0 ]]
}

@test "a fortified program: the _chk forms of read, fread, recv and getcwd into regions" {
  # Built with _FORTIFY_SOURCE=2, as Debian builds its packages: it calls
  # the _chk forms, which glibc would take to the kernel from inside.
  run nm -D "$PROGS/fortified"
  for f in __read_chk __fread_chk __recv_chk __getcwd_chk; do
    assert_output --partial "U $f"
  done
  data=$BATS_TEST_TMPDIR/data
  seq 1 100000 >"$data"
  for m in none sw-all alias; do
    run_mode "$m" "$PROGS/fortified" "$data" 3000
  done
  same_as_without sw-all alias
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_output --partial "588895 bytes, checksum"
  for m in sw-all alias; do
    [[ $(sum_of "$m" fortified write_traps) -gt 0 ]]
    [[ $(sum_of "$m" fortified syscall_buffers) -gt 0 ]]
  done
}

@test "tar, mawk, xz and sort under auto: blocks of a page or more are protected by their own pages" {
  # tar's 10 KiB record buffer and mawk's code buffer are compared with
  # pointers kept in memory; moved by a trap, they ran off their buffers
  # (tar hung, mawk: "bozo: CODEWARN is too small"). Given whole pages and
  # protected by their own pages (in place in rtl's views under mprotect,
  # in the copy of such blocks under page tables), no pointer of theirs
  # moves. mawk by name: which program "awk" is depends on the machine.
  seq 1 200000 | mawk '{print $1 % 977, "item", $1}' >"$BATS_TEST_TMPDIR/in.txt"
  for m in none sw-all; do
    run_mode "$m" sh -c 'cp "$1" in.txt && tar cf - in.txt | tar xOf - | md5sum &&
      mawk "{s += \$1; n[\$2]++} END {print s, length(n)}" in.txt &&
      xz -c in.txt | xz -dc | sort -n | md5sum' sh "$BATS_TEST_TMPDIR/in.txt"
  done
  same_as_without sw-all
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "97502082 1"
  for p in tar mawk; do
    (($(in_place sw-all "$p"))) || continue
    [[ $(sum_of sw-all "$p" in_place_protects) -gt 0 ]]
  done
}

@test "gawk under swizzle and alias: its alternate signal stack is a malloc'd block" {
  # gawk's libsigsegv mallocs a 16 KiB alternate signal stack; selected
  # and protected, the kernel could not write a signal frame there and
  # gawk died at its first trap. The preload gives the kernel a stack of
  # its own instead (docs/signals.md, "Alternate signal stacks").
  seq 1 200000 | mawk '{print $1 % 977, "item", $1}' >"$BATS_TEST_TMPDIR/in.txt"
  for m in none sw-all alias; do
    run_mode "$m" gawk '{s += $1; n[$2]++} END {print s, length(n)}' "$BATS_TEST_TMPDIR/in.txt"
  done
  same_as_without sw-all alias
  run cat "$BATS_TEST_TMPDIR/runs/none.out"
  assert_line "97502082 1"
  for m in sw-all alias; do
    [[ $(sum_of "$m" gawk selected) -gt 0 ]]
    [[ $(sum_of "$m" gawk write_traps) -gt 0 ]]
  done
}

@test "an alternate signal stack in a selected block: the handler runs, the stack reads back as set" {
  for m in none sw-all alias; do
    run_mode "$m" "$PROGS/altstack"
  done
  same_as_without sw-all alias
  run cat "$BATS_TEST_TMPDIR/runs/sw-all.out"
  assert_output "handler ran on the alternate stack, stack read back as set"
}

@test "programs exec'd under the preload keep the one filter their first process installed" {
  needs_native
  policy sw-io2 '[rule io]' 'size = 4K..8K' 'protect = read'
  # sh under the preload execs sh, which execs grep: each would install
  # a filter of its own if it did not find its parent's.
  run_mode sw-io2 sh -c 'exec sh -c "grep -E \"^(Seccomp|Seccomp_filters):\" /proc/self/status"'
  run cat "$BATS_TEST_TMPDIR/runs/sw-io2.out"
  assert_line --regexp '^Seccomp:[[:space:]]+2$'
  assert_line --regexp '^Seccomp_filters:[[:space:]]+1$'
}

@test "the filter leaves the program's speculative-store-bypass mitigation as it was" {
  needs_native
  # Where spec_store_bypass_disable is "seccomp" (the kernel's default
  # before 5.16), a filter installed without SPEC_ALLOW forces the
  # mitigation on ("thread force mitigated"); where it is "prctl" the
  # line is the same either way.
  policy sw-io2 '[rule io]' 'size = 4K..8K' 'protect = read'
  local show='grep -E "^(Seccomp|Speculation_Store_Bypass):" /proc/self/status'
  run_mode none sh -c "$show"
  run_mode sw-io2 sh -c "$show"
  run cat "$BATS_TEST_TMPDIR/runs/sw-io2.out"
  assert_line --regexp '^Seccomp:[[:space:]]+2$'
  diff <(grep Speculation "$BATS_TEST_TMPDIR/runs/none.out") \
    <(grep Speculation "$BATS_TEST_TMPDIR/runs/sw-io2.out")
}
