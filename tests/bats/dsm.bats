#!/usr/bin/env bats
# The DSM case study (docs/dsm.md) on 2-4 ranks and small sizes: each test
# maps to one promise of the protocol or the robustness rules (the table:
# docs/dsm-results.md, "Tests"). Needs mpirun; skipped when the DSM was not
# built (no MPI). tests/run.sh exports RTL_BUILD.

load helpers

setup() {
  b="$build/dsm"
  [[ -x $b/tests/dsm-proto ]] || skip "DSM not built (no MPI)"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export DSM_TIMEOUT=30
}

# mpi NP PROGRAM ARGS...: run on NP ranks (oversubscribed), bounded in time.
mpi() {
  local np=$1
  shift
  run timeout 120 mpirun --oversubscribe -np "$np" "$@"
}

# The diff-request count of rank R on the line "stats WHAT rank R: ...".
diffreq() {
  grep "^stats $1 rank $2:" <<<"$output" | sed 's/.*diffreq \([0-9]*\).*/\1/'
}

@test "page diffs: rtl's encoding byte for byte, strict decoder agrees with region_diff_apply" {
  run "$b/tests/dsm-pagediff"
  assert_success
  refute_output --partial "not ok"
  assert_line "1..7"
}

@test "lock-protected counter: 3 ranks x 50 increments, pages and regions" {
  for m in vm rt; do
    mpi 3 "$b/tests/dsm-proto" counter $m
    assert_success
    assert_line "PASS counter $m"
  done
}

@test "locks travel: 4 ranks take turns by a counter under one lock, nested second lock" {
  for m in vm rt; do
    mpi 4 "$b/tests/dsm-proto" turns $m
    assert_success
    assert_line "PASS turns $m"
  done
}

@test "barrier phases: every rank sees every rank's writes of the phase" {
  for m in vm rt; do
    mpi 4 "$b/tests/dsm-proto" phases $m
    assert_success
    assert_line "PASS phases $m"
  done
}

@test "barrier trees of three levels and the barrier at rank 0 give the same phases" {
  for f in 2 6; do
    mpi 7 -x DSM_BARRIER_FANOUT=$f "$b/tests/dsm-proto" phases rt
    assert_success
    assert_line "PASS phases rt"
  done
}

@test "a barrier is 2(N-1) messages in any tree (dsm-barrier; nothing timed)" {
  for f in 2 4; do
    mpi 5 -x DSM_BARRIER_FANOUT=$f "$b/dsm-barrier" -m rt -b 20
    assert_success
    assert_output --regexp '"empty":\{"messages":8\.00,'
    assert_output --regexp '"written":\{"messages":8\.00,'
  done
}

@test "without doorbells (DSM_DOORBELL=0) the threads poll and the protocol holds" {
  for m in vm rt; do
    mpi 3 -x DSM_DOORBELL=0 "$b/tests/dsm-proto" phases $m
    assert_success
    assert_line "PASS phases $m"
    mpi 3 -x DSM_DOORBELL=0 "$b/tests/dsm-proto" counter $m
    assert_success
    assert_line "PASS counter $m"
  done
}

@test "the measuring programs of make bench-dsm run (dsm-latency, dsm-trapcost; nothing timed)" {
  mpi 2 "$b/dsm-latency" -m rt -n 20 -r 1
  assert_success
  assert_output --regexp '^RESULT \{"app":"latency","mode":"rt"'
  assert_output --partial "holder waits in compute"
  run "$b/dsm-trapcost"
  assert_success
  python3 -c 'import json, sys
d = json.loads(sys.argv[1])
assert set(d) == {"read", "write", "none"}
assert all(v > 0 for k in d.values() for v in k.values())' "$output"
}

@test "false sharing on one page: pages ping-pong, regions move nothing" {
  mpi 2 "$b/tests/dsm-proto" falseshare vm
  assert_success
  assert_line "PASS falseshare vm"
  (($(diffreq rounds 0) > 0 && $(diffreq rounds 1) > 0))
  mpi 2 "$b/tests/dsm-proto" falseshare rt
  assert_success
  assert_line "PASS falseshare rt"
  [[ $(diffreq rounds 0) == 0 && $(diffreq rounds 1) == 0 ]]
}

@test "multiple writers to one page (one region) are merged" {
  for m in vm rt; do
    mpi 4 "$b/tests/dsm-proto" multiwriter $m
    assert_success
    assert_line "PASS multiwriter $m"
  done
}

@test "diffs are applied in vector-time order; one request to the dominating writer" {
  for m in vm rt; do
    mpi 3 "$b/tests/dsm-proto" order $m
    assert_success
    assert_line "PASS order $m"
  done
}

@test "regions: a write through an unregistered pointer after a lowering is caught" {
  mpi 2 "$b/tests/dsm-proto" contract rt
  assert_failure
  assert_output --partial "written through an unregistered pointer"
  refute_output --partial "went unnoticed"
}

@test "a malformed or truncated diff from a peer is rejected, never applied" {
  for inj in bad-diff truncate-diff; do
    for m in vm rt; do
      mpi 2 -x DSM_INJECT=$inj "$b/tests/dsm-proto" phases $m
      assert_failure
      assert_output --regexp "malformed diff \([0-9]+ bytes\) of unit [0-9]+, interval [0-9]+ of rank [01]: rejected, not applied"
      refute_output --partial "PASS"
    done
  done
}

@test "a truncated message is rejected whole" {
  mpi 2 -x DSM_INJECT=bad-message "$b/tests/dsm-proto" phases rt
  assert_failure
  assert_output --partial "malformed diff reply message"
  assert_output --partial "truncated; rejected"
}

@test "a rank that dies ends the run with a message, not a hang" {
  mpi 3 -x DSM_INJECT=exit-at-barrier:3:1 "$b/tests/dsm-proto" phases vm
  assert_failure
  (( status != 124 )) # not the timeout's
  assert_output --partial "rank 1: exiting at barrier 3"
  assert_output --partial "Exit code:    7"
}

@test "a rank that stops answering ends the run after DSM_TIMEOUT, named" {
  DSM_TIMEOUT=2 mpi 3 -x DSM_TIMEOUT -x DSM_INJECT=stop-at-barrier:2:2 \
    "$b/tests/dsm-proto" phases rt
  assert_failure
  (( status != 124 ))
  assert_output --partial "rank 2 stopped responding: no heartbeat for 2 s while this rank waited for the arrival at barrier 2"
}

@test "a rank that computes longer than DSM_TIMEOUT is waited for, not named dead" {
  DSM_TIMEOUT=1 mpi 3 -x DSM_TIMEOUT -x DSM_INJECT=slow-at-barrier:2:2:3 \
    "$b/tests/dsm-proto" phases vm
  assert_success
  assert_line "PASS phases vm"
  assert_output --partial "waited 1 s for the arrival at barrier 2 from rank 2, which is alive (computing); waiting on"
  refute_output --partial "stopped responding"
}

# Rank 1 never writes to rank 2 in falseshare: after computing 4 s, rank 2
# asks it for diffs and its reply comes 300 ms late. Silence before the wait
# is no sign of death (CI once named rank 1 dead after a phases run like the
# one above, when its own request to rank 2 came late).
@test "a peer quiet while this rank computed is not named dead when waited for" {
  DSM_TIMEOUT=2 mpi 3 -x DSM_TIMEOUT \
    -x DSM_INJECT=slow-at-barrier:10:2:4,slow-reply:1:300 \
    "$b/tests/dsm-proto" falseshare vm
  assert_success
  assert_line "PASS falseshare vm"
  assert_output --partial "rank 2: computing 4 s more before barrier 10"
  refute_output --partial "stopped responding"
}

@test "ranks that allocate differently are stopped at the next barrier" {
  for m in vm rt; do
    mpi 2 "$b/tests/dsm-proto" badalloc $m
    assert_failure
    assert_output --partial "rank 1 made 2 allocations, rank 0 1: dsm_malloc and dsm_region_alloc are collective"
    refute_output --partial "FAIL"
  done
}

@test "a plain segfault in a DSM program still kills it with SIGSEGV" {
  for m in vm rt; do
    mpi 2 "$b/tests/dsm-proto" crash $m
    assert_failure
    assert_output --partial "exited on signal 11"
  done
}

@test "applications: SOR, MM, LU, FLOYD, IS equal the sequential run (2 and 3 ranks; pages, regions, annotated regions)" {
  for np in 2 3; do
    for m in vm rt an; do
      mpi $np "$b/dsm-sor" -m $m -r 24 -c 256 -i 4
      assert_success
      assert_line --regexp "^sor $m on $np: .* result OK"
      mpi $np "$b/dsm-mm" -m $m -n 48
      assert_success
      assert_line --regexp "^mm $m on $np: .* result OK"
      mpi $np "$b/dsm-lu" -m $m -n 96 -b 16
      assert_success
      assert_line --regexp "^lu $m on $np: .* result OK"
      mpi $np "$b/dsm-floyd" -m $m -n 40
      assert_success
      assert_line --regexp "^floyd $m on $np: .* result OK"
      mpi $np "$b/dsm-is" -m $m -k 4096 -b 256 -i 3
      assert_success
      assert_line --regexp "^is $m on $np: .* result OK"
    done
  done
}

@test "written bits (WB): protocol scenarios and applications on units of a page or more, no write trap" {
  for t in counter turns phases order; do
    mpi 3 "$b/tests/dsm-proto" $t wb
    assert_success
    assert_line "PASS $t wb"
  done
  mpi 3 -x DSM_GC_BYTES=0 "$b/tests/dsm-proto" discard wb
  assert_success
  assert_line "PASS discard wb"
  for np in 2 3; do
    for a in "sor -r 24 -c 1024 -i 4" "mm -n 64" "lu -n 128 -b 32" "floyd -n 1030" \
      "is -k 4096 -b 1024 -i 3" "tsp -n 12 -s 4"; do
      set -- $a
      mpi $np "$b/dsm-$1" -m wb "${@:2}"
      assert_success
      assert_line --regexp "^$1 wb on $np: .* result OK"
    done
  done
  # Where the kernel has written bits, a first write to a valid region
  # takes no trap: the units found written replace the write traps.
  written=$(python3 -c 'import ctypes, sys; print(1 if ctypes.CDLL(sys.argv[1]).region_dirty_backend(None) == 2 else 0)' "$build/core/librtl.so")
  mpi 2 "$b/dsm-sor" -m wb -r 24 -c 1024 -i 4
  if [[ $written == 1 ]]; then
    assert_output --regexp '"write_traps":0,'
    assert_output --regexp '"written_units":[1-9]'
  fi
}

@test "TSP: branch and bound under two locks finds the sequential optimum (10 to 14 cities)" {
  for np in 2 3; do
    for m in vm rt an; do
      for n in 10 14; do
        mpi $np "$b/dsm-tsp" -m $m -n $n -s 4
        assert_success
        assert_line --regexp "^tsp $m on $np: .* result OK"
        assert_output --regexp '"remote_acquires":[1-9]'
      done
    done
  done
}

@test "garbage collection at every barrier: protocol scenarios still hold" {
  for m in vm rt; do
    mpi 3 -x DSM_GC_BYTES=0 "$b/tests/dsm-proto" discard $m
    assert_success
    assert_line "PASS discard $m"
    for s in counter turns phases multiwriter; do
      mpi 3 -x DSM_GC_BYTES=0 "$b/tests/dsm-proto" $s $m
      assert_success
      assert_line "PASS $s $m"
    done
  done
}

@test "garbage collection at every barrier: applications equal the sequential run" {
  for m in vm rt; do
    for app in "sor -r 24 -c 256 -i 4" "lu -n 96 -b 16" "floyd -n 40" \
      "is -k 4096 -b 256 -i 3" "tsp -n 13"; do
      set -- $app
      name=$1
      shift
      mpi 3 -x DSM_GC_BYTES=0 "$b/dsm-$name" -m $m "$@"
      assert_success
      assert_line --regexp "^$name $m on 3: .* result OK"
      refute_output --regexp '"gc_runs":0[,}]'
    done
  done
}

# One longrun line's field: longrun_field RANK NAME.
longrun_field() {
  grep "^longrun rank $1:" <<<"$output" | sed "s/.* $2 \([0-9]*\).*/\1/"
}

@test "10^4 barriers in bounded memory: collections keep consistency data under DSM_GC_BYTES" {
  for m in vm rt; do
    mpi 2 -x DSM_GC_BYTES=1M "$b/tests/dsm-proto" longrun $m 10000
    assert_success
    assert_line "PASS longrun $m"
    for r in 0 1; do
      line=$(grep "^longrun rank $r:" <<<"$output")
      echo "# $m: $line" >&3
      early=$(sed 's/.*maxrss_kb at [0-9]*: \([0-9]*\),.*/\1/' <<<"$line")
      late=$(sed 's/.*at 10000: \([0-9]*\)$/\1/' <<<"$line")
      (( $(longrun_field $r gc_runs) >= 10 ))
      (( $(longrun_field $r cons_peak_kb) <= 1100 ))
      # What was collected would have been kept: 16 MB here.
      (( $(longrun_field $r gc_freed_kb) > 10000 ))
      # Peak RSS after barrier 1000 grows by less than 2 MB.
      (( late - early < 2048 ))
    done
  done
}

@test "applications on one rank need no message" {
  mpi 1 "$b/dsm-sor" -m rt -r 8 -c 64 -i 2
  assert_success
  assert_output --partial '"messages":0,'
  refute_output --regexp '"messages":[1-9]'
}

# outside NP MODE PROGRAM ARGS...: one run's seconds outside its timed
# section (the whole mpirun's, less the time it reports) in $outside, and
# that less rank 0's sequential reference run in $besides; the whole run's
# in $whole; from the end of rank 0's check to the end of dsm_finish (its
# FINISH line) in $finish. Fails the test if the run does.
outside() {
  local np=$1 m=$2 t0 t1 timed seq check after
  shift 2
  t0=$(date +%s.%N)
  mpi "$np" "$@" -m "$m"
  t1=$(date +%s.%N)
  assert_success
  timed=$(sed -n 's/^RESULT .*"time":\([0-9.]*\),.*/\1/p' <<<"$output")
  seq=$(sed -n 's/^RESULT .*"seq_time":\([0-9.]*\),.*/\1/p' <<<"$output")
  check=$(sed -n 's/^FINISH {"check":\([0-9.]*\),.*/\1/p' <<<"$output")
  after=$(sed -n 's/^FINISH .*"after":\([0-9.]*\)}/\1/p' <<<"$output")
  [[ -n $timed && -n $seq && -n $check && -n $after ]] || fail "no RESULT or FINISH line: $output"
  whole=$(printf '%.3f' "$(bc <<<"$t1 - $t0")")
  outside=$(printf '%.3f' "$(bc <<<"$t1 - $t0 - $timed")")
  besides=$(printf '%.3f' "$(bc <<<"$t1 - $t0 - $timed - $seq")")
  finish=$(printf '%.3f' "$(bc <<<"$after - $check")")
}

# best N NP MODE PROGRAM ARGS...: outside, N times; the run with the least
# time outside its timed section besides the sequential run leaves its
# figures.
best() {
  local n=$1 k o b w f
  shift
  for ((k = 0; k < n; k++)); do
    outside "$@"
    if ((k == 0)) || (($(bc <<<"$besides < $b"))); then
      o=$outside b=$besides w=$whole f=$finish
    fi
  done
  outside=$o besides=$b whole=$w finish=$f
}

@test "a run ends when its work ends: outside its timed section and the reference run RT within VM + 0.3 s (0.5 busy) and 2 s, finish 0.5 s" {
  # Each application on 2 and 4 ranks, quiet, then with a busy process on
  # each core: the whole mpirun's time less the timed section's, under
  # regions (RT) within pages' (VM) + 0.3 s (busy: 0.5), both less rank 0's sequential
  # reference run (the same work in both, and on 4 busy ranks LU's varied
  # by 0.4 s from run to run; it alone took 1.43 s of RT's 2.12 s in one
  # run with a third load on the cores), and, less that run too, under
  # 2 s; from the end of
  # rank 0's check to the end of dsm_finish, under 0.5 s in both. Busy,
  # the best of three runs of each: the other load makes one run's time
  # vary by half a second. (VM's check itself, a page miss per page of
  # the result, took up to 3 s of LU's 4 s on 4 busy ranks: the
  # application's work, not the finish.) Rank 0 checks the result against a sequential run after the
  # timed section while the other ranks wait for it: waiting in an MPI
  # collective, their application threads spun and starved the service
  # threads rank 0's reads need (LU: 0.7 s more than VM on 2 ranks).
  # Rank 0's check reads every unit, a miss each, and a miss on 4 busy
  # ranks costs a millisecond or two of wake-ups: SOR's rows are a page
  # (1024 floats) so that both versions check with as many misses, and
  # FLOYD's 120 rows few (a miss per row under RT, per 8 rows under VM):
  # what differs is how the run ends.
  local apps=("sor -r 128 -c 1024 -i 10" "mm -n 200" "lu -n 1024 -b 64" "floyd -n 120"
    "is -k 262144 -b 4096 -i 3" "tsp -n 12 -s 4")
  local busy=() load np a vm vmb vmfin rt bad=() reps=1 margin=0.3
  for load in quiet busy; do
    if [[ $load == busy ]]; then
      reps=3 # the other load makes single runs vary by half a second
      # LU's rank 0 checks its result by a miss per unit, a few ms each
      # on busy cores: best of three, VM's and RT's still differed by
      # 0.31 s in one run of three with no change to either.
      margin=0.5
      for ((i = 0; i < $(nproc); i++)); do
        sh -c 'while :; do :; done' &
        busy+=($!)
      done
    fi
    for np in 2 4; do
      for a in "${apps[@]}"; do
        # shellcheck disable=SC2086
        best "$reps" "$np" vm "$b/dsm-${a%% *}" ${a#* }
        vm=$outside vmb=$besides vmfin=$finish
        # shellcheck disable=SC2086
        best "$reps" "$np" rt "$b/dsm-${a%% *}" ${a#* }
        rt=$outside
        (($(bc <<<"$besides <= $vmb + $margin && $besides < 2"))) ||
          bad+=("$a on $np ($load): outside the timed section $rt s under RT ($besides s" \
            "besides the sequential run), $vm s under VM ($vmb s)")
        (($(bc <<<"$finish < 0.5 && $vmfin < 0.5"))) ||
          bad+=("$a on $np ($load): finished in $finish s under RT, $vmfin under VM")
        echo "# $load, $np ranks, ${a%% *}: outside the timed section VM $vm s ($vmb s" \
          "besides the sequential run), RT $rt s ($besides s; whole run $whole s);" \
          "finish VM $vmfin s, RT $finish s" >&3
      done
    done
  done
  ((${#busy[@]} == 0)) || kill "${busy[@]}"
  ((${#bad[@]} == 0)) || fail "$(printf '%s\n' "${bad[@]}")"
}

@test "a rank that finishes while another still reads from it serves it to the end" {
  # Ranks 1.. call dsm_finish right after a barrier; rank 0 then reads
  # every unit they wrote (diff requests to ranks already finishing), with
  # rank 1's replies made 20 ms late.
  for m in vm rt; do
    mpi 3 -x DSM_INJECT=slow-reply:1:20 "$b/tests/dsm-proto" finishread $m
    assert_success
    assert_output --partial "PASS finishread $m"
  done
}
