#!/usr/bin/env bash
# A shell script of the kind people trial tools on: functions, command
# substitution, arrays, an associative array, four background jobs. What
# it prints depends on nothing but N (bench/programs.py runs it with and
# without rtl and compares). Usage: script.sh OUTDIR [N]
out=${1:?usage: script.sh OUTDIR [N]}
N=${2:-30}
declare -A seen
words=()
fib() { local n=$1 a=0 b=1 i; for ((i = 0; i < n; i++)); do ((t = a + b, a = b, b = t)); done; echo $a; }
upper() { local s=$1; echo "${s^^}"; }
work() {
  local id=$1 j acc=() result
  for ((j = 0; j < N; j++)); do
    result=$(fib $((j % 30)))
    acc+=("$id:$j:$result")
    seen["k$id-$j"]=$(upper "w$j")
  done
  local s=0 x
  for x in "${acc[@]}"; do s=$((s + ${#x})); done
  echo "job $id: ${#acc[@]} items, $s chars, ${#seen[@]} keys"
}
for ((i = 0; i < 2000; i++)); do words+=("word$i"); done
str=$(printf '%s,' "${words[@]}")
echo "words ${#words[@]} len ${#str}"
for id in 1 2 3 4; do work $id >"$out/job.$id" & done
wait
cat "$out"/job.1 "$out"/job.2 "$out"/job.3 "$out"/job.4
for ((j = 0; j < N; j++)); do r=$(upper "$j$str"); done
echo "main ${#r}"
