#!/usr/bin/env bats
# The DSM across hosts (docs/dsm.md, "Several machines"), on this machine:
# two network namespaces joined by a veth pair, each with its own address
# and host name, stand for two hosts; Open MPI launches on the second
# through its rsh launcher, with an "ssh" that enters the namespace instead
# of logging in. So the multi-host path runs for real: a hostfile, daemons
# started remotely, TCP between the hosts (shared memory only within one),
# variables forwarded with -x, the DSM's doorbells between addresses.
# Needs root, iproute2 and unshare; skipped otherwise.

load helpers

setup_file() {
  export HOSTS_SKIP=""
  if ((EUID != 0)) || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
    export HOSTS_SKIP="needs root, ip (iproute2) and unshare"
    return
  fi
  local id=$$
  export NS_A=dsm$id-a NS_B=dsm$id-b
  export ADDR_A=10.231.7.1 ADDR_B=10.231.7.2 NET=10.231.7.0/24
  if ! { ip netns add "$NS_A" && ip netns add "$NS_B" &&
    ip link add "d${id}a" type veth peer name "d${id}b" &&
    ip link set "d${id}a" netns "$NS_A" && ip link set "d${id}b" netns "$NS_B" &&
    ip -n "$NS_A" addr add "$ADDR_A/24" dev "d${id}a" &&
    ip -n "$NS_B" addr add "$ADDR_B/24" dev "d${id}b" &&
    ip -n "$NS_A" link set "d${id}a" up && ip -n "$NS_B" link set "d${id}b" up &&
    ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up; } 2>"$BATS_FILE_TMPDIR/ip.err"; then
    export HOSTS_SKIP="cannot make network namespaces here: $(head -c 200 "$BATS_FILE_TMPDIR/ip.err")"
    return
  fi
  export VETH_A="d${id}a"
  # Open MPI's "ssh": the host's namespace, with the host's own name (its
  # session directory and shared-memory files are named after it).
  export AGENT=$BATS_FILE_TMPDIR/ns-ssh
  cat >"$AGENT" <<EOF
#!/bin/sh
host=\$1
shift
case \$host in
$ADDR_A) ns=$NS_A ;;
$ADDR_B) ns=$NS_B ;;
*) echo "ns-ssh: unknown host \$host" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$ns; \$*"
EOF
  chmod +x "$AGENT"
  printf '%s slots=2\n%s slots=2\n' "$ADDR_A" "$ADDR_B" >"$BATS_FILE_TMPDIR/hostfile"
  printf '%s slots=4\n%s slots=4\n' "$ADDR_A" "$ADDR_B" >"$BATS_FILE_TMPDIR/hostfile8"
}

teardown_file() {
  [[ -n ${NS_A:-} ]] && ip netns del "$NS_A" 2>/dev/null
  [[ -n ${NS_B:-} ]] && ip netns del "$NS_B" 2>/dev/null
  true
}

setup() {
  [[ -z $HOSTS_SKIP ]] || skip "$HOSTS_SKIP"
  b="$build/dsm"
  [[ -x $b/tests/dsm-proto ]] || skip "DSM not built (no MPI)"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

# hosts PROGRAM ARGS...: 4 ranks, 2 on each host; mpirun runs on host A.
# HOSTS_NP=8: 8 ranks, 4 on each.
hosts() {
  local np=${HOSTS_NP:-4} file=$BATS_FILE_TMPDIR/hostfile
  ((np == 8)) && file+=8
  run timeout 120 ip netns exec "$NS_A" unshare --uts sh -c \
    'hostname "$0"; shift; exec "$@"' "$NS_A" sh \
    mpirun --hostfile "$file" -np "$np" \
    --mca plm_rsh_agent "$AGENT" \
    --mca btl_tcp_if_include "$NET" --mca oob_tcp_if_include "$NET" \
    -x DSM_TIMEOUT=30 -x DSM_HOSTS_PROBE=forwarded "$@"
}

tx_bytes() {
  ip netns exec "$NS_A" cat "/sys/class/net/$VETH_A/statistics/tx_bytes"
}

@test "hosts: two ranks on each host, launched remotely, the environment forwarded" {
  hosts sh -c 'echo "rank $OMPI_COMM_WORLD_RANK on $(hostname) sees $DSM_HOSTS_PROBE"'
  assert_success
  assert_line "rank 0 on $NS_A sees forwarded"
  assert_line "rank 1 on $NS_A sees forwarded"
  assert_line "rank 2 on $NS_B sees forwarded"
  assert_line "rank 3 on $NS_B sees forwarded"
}

@test "hosts: protocol scenarios over TCP between hosts, pages and regions" {
  local before
  before=$(tx_bytes)
  for m in vm rt; do
    for s in phases counter multiwriter; do
      hosts "$b/tests/dsm-proto" $s $m
      assert_success
      assert_line "PASS $s $m"
      # Doorbells reached the other host (no fall-back to polling).
      refute_output --partial "doorbells (UDP between ranks) do not get through"
    done
  done
  # The diffs and intervals went over the link between the hosts.
  (( $(tx_bytes) - before > 100000 ))
}

@test "hosts: applications and collection equal the sequential run across hosts" {
  for m in vm rt; do
    hosts "$b/dsm-sor" -m $m -r 64 -c 512 -i 4
    assert_success
    assert_line --regexp "^sor $m on 4: .* result OK"
    hosts "$b/dsm-tsp" -m $m -n 12
    assert_success
    assert_line --regexp "^tsp $m on 4: .* result OK"
    hosts -x DSM_GC_BYTES=0 "$b/tests/dsm-proto" longrun $m 200
    assert_success
    assert_line "PASS longrun $m"
  done
}

@test "hosts: every application on 2 x 4 ranks equals the sequential run" {
  local m a
  export HOSTS_NP=8
  for m in vm rt; do
    for a in "sor -r 64 -c 512 -i 4" "mm -n 64" "lu -n 128 -b 16" "floyd -n 64" \
      "is -k 8192 -b 256 -i 3" "tsp -n 11"; do
      # shellcheck disable=SC2086
      hosts "$b/dsm-${a%% *}" -m $m ${a#* }
      assert_success
      assert_line --regexp "^${a%% *} $m on 8: .* result OK"
    done
  done
}
