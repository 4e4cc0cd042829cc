#!/usr/bin/env bash
# Say what machine this is, in the lines a CI log starts with: the CPU, the
# features glibc's string functions choose by, glibc and the kernel. A
# failure of the trap path's tests depends on them (docs/decoder.md).
cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //')
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
  grep -xE 'sse2|ssse3|sse4_2|avx|avx2|bmi2|erms|fsrm|avx512f|avx512vl|avx512bw|rtm' |
  tr '\n' ' ')
echo "machine: ${cpu:-unknown CPU}, $(nproc) cores; flags: ${flags:-none}"
echo "machine: $(getconf GNU_LIBC_VERSION 2>/dev/null || echo 'glibc unknown'), Linux $(uname -r)"
