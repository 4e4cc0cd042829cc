# The program matrix (docs/programs.md, "Real programs"): one workload of a
# real program run without the preload and under each policy the docs
# allow, compared byte for byte (exit status, stdout, stderr, the files it
# writes), with its peak memory held to 1.5 x the run without rtl + 64 MiB.
# Each run's time and memory go to $MATRIX_LOG for the table in the docs.

load ../bats/helpers

# The policies, by name: every kind the docs allow for an unmodified
# program. "builtin" is rtlctl run's default; "init" what rtlctl init writes;
# "alias-epoch" the other exact mechanism, re-protecting (it found the
# alternate signal stack an epoch took away from gawk, clang and ruby).
POLICIES=(builtin init none-grant 1k-read read-grant read-grant-epoch sample-7 alias-epoch)

matrix_setup() {
  : "${RTL_BUILD:?RTL_BUILD (the build directory) must be set; tests/run.sh sets it}"
  PRELOAD=$RTL_BUILD/preload/librtlpreload.so
  PEAKMEM=$RTL_BUILD/tests/progs/peakmem
  RTLCTL=$RTL_BUILD/tools/rtlctl
  [[ -f $PRELOAD ]] || fail "no preload at $PRELOAD"
  T=$BATS_TEST_TMPDIR
  POL=$T/policies
  mkdir -p "$POL" "$T/in" "$T/runs" "$T/reports"
  "$RTLCTL" init >"$POL/init.ini"
  matrix_policy none-grant '[rule all]' 'protect = none' \
    'on_read = count, grant-rw' 'on_write = count, grant-rw'
  matrix_policy 1k-read '[rule io]' 'size = 1K..' 'protect = read'
  matrix_policy read-grant '[rule all]' 'protect = read' 'on_write = count, grant-rw'
  matrix_policy read-grant-epoch '[rule all]' 'protect = read' \
    'on_write = count, grant-rw' 'epoch = 1ms'
  matrix_policy sample-7 '[rule all]' 'sample = 7' 'protect = none' \
    'on_read = count, grant-read' 'on_write = count, grant-rw'
  matrix_policy alias-epoch '[rule all]' 'mechanism = alias' 'protect = read' \
    'on_write = count, grant-rw' 'epoch = 1ms'
  MATRIX_LOG=${MATRIX_LOG:-$RTL_BUILD/programs-matrix.tsv}
}

# matrix_policy NAME LINES...: $POL/NAME.ini (no report line: run_in sets RTL_REPORT).
matrix_policy() {
  local name=$1
  shift
  printf '%s\n' "$@" >"$POL/$name.ini"
}

# The environment of a run under policy $1.
policy_env() {
  case $1 in
    builtin) echo "RTL_CONFIG=@builtin" ;;
    *) echo "RTL_CONFIG=$POL/$1.ini" ;;
  esac
}

# run_in MODE OUTFILES CMD...: run CMD in a fresh $T/work/MODE holding a
# copy of $T/in, without the preload (MODE none) or under policy MODE.
# Keeps out, err, rc, the peak memory (KiB: the process group's Pss, which
# counts a page rtl maps several times once) and seconds, and the digest of
# OUTFILES (a space-separated list of paths in the work folder).
run_in() {
  local mode=$1 outfiles=$2
  local w=$T/work/$mode r=$T/runs/$mode
  shift 2
  rm -rf "$w"
  mkdir -p "$w" "$T/reports/$mode"
  cp -a "$T/in/." "$w/"
  local env=(env HOME="$w" LC_ALL=C.UTF-8 TZ=UTC)
  [[ $mode == none ]] ||
    env+=("$(policy_env "$mode")" "RTL_REPORT=$T/reports/$mode/%e.%p.json"
      "LD_PRELOAD=$PRELOAD")
  local rc=0
  (cd "$w" && timeout 300 "$PEAKMEM" "$r.time" -- \
    "${env[@]}" "$@" >"$r.out" 2>"$r.err" </dev/null) || rc=$?
  echo "$rc" >"$r.rc"
  (cd "$w" && for f in $outfiles; do
    if [[ -e $f ]]; then md5sum "$f"; else echo "missing $f"; fi
  done) >"$r.files"
}

# differs MODE: why MODE's run is not the run without rtl ("" if alike).
differs() {
  local m=$1 f
  for f in rc out err files; do
    if ! cmp -s "$T/runs/none.$f" "$T/runs/$m.$f"; then
      echo "$f differs:"
      diff <(head -c 1500 "$T/runs/none.$f") <(head -c 1500 "$T/runs/$m.$f") | head -n 12
      return
    fi
  done
  local base peak
  base=$(tail -n 1 "$T/runs/none.time" | cut -d' ' -f1)
  peak=$(tail -n 1 "$T/runs/$m.time" | cut -d' ' -f1)
  # 1.5 x the peak without rtl, plus 64 MiB (KiB here).
  if [[ -n $base && -n $peak ]] && ((peak * 2 > base * 3 + 2 * 65536)); then
    echo "peak memory $((peak / 1024)) MiB, over 1.5 x $((base / 1024)) MiB + 64 MiB"
  fi
}

# run_matrix NAME OUTFILES CMD...: the run without rtl, then every policy;
# fails naming each policy whose run differs.
run_matrix() {
  local name=$1 outfiles=$2 m bad=() why
  shift 2
  run_in none "$outfiles" "$@"
  for m in "${POLICIES[@]}"; do
    run_in "$m" "$outfiles" "$@"
    why=$(differs "$m")
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$m" "$(tail -n 1 "$T/runs/none.time")" \
      "$(tail -n 1 "$T/runs/$m.time")" "${why:+differs}" >>"$MATRIX_LOG"
    if [[ -n $why ]]; then
      bad+=("$m")
      echo "# $name under $m: $why" >&3
    fi
  done
  ((${#bad[@]} == 0)) || fail "$name differs under: ${bad[*]}"
}
