#!/usr/bin/env bash
# Install what the aarch64 cross build and its tests under qemu-user need,
# only what is missing: the arm64 architecture in dpkg, Debian's cross
# compilers, the arm64 -dev packages rtl links with, qemu-user-static. Used
# by make test-aarch64; a no-op on a machine that has them all.
#
# libjemalloc-dev is not Multi-Arch: its arm64 package would replace the
# amd64 one make test needs. So its arm64 .deb is fetched and unpacked
# into a folder of its own instead (the argument, default
# build-sysroot-aarch64), which the cross build is pointed at.
# Usage: deps-aarch64.sh [SYSROOT]
set -euo pipefail
sysroot=${1:-build-sysroot-aarch64}

packages=(
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static
  libc6-dev:arm64 libcapstone-dev:arm64 libunwind-dev:arm64
  libinih-dev:arm64 libjansson-dev:arm64
  libelf-dev:arm64 libdw-dev:arm64
)

sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive

added=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "rtl: adding the arm64 architecture to dpkg" >&2
  "${sudo[@]}" dpkg --add-architecture arm64
  added=1
fi

# The arm64 jemalloc, unpacked beside the build.
fetch_jemalloc() {
  [[ -f $sysroot/usr/lib/aarch64-linux-gnu/libjemalloc_pic.a ]] && return 0
  local tmp
  tmp=$(mktemp -d)
  chmod 777 "$tmp" # apt's download user writes there
  (cd "$tmp" && apt-get download -qq libjemalloc-dev:arm64 >/dev/null)
  mkdir -p "$sysroot"
  dpkg-deb -x "$tmp"/libjemalloc-dev_*_arm64.deb "$sysroot"
  rm -rf "$tmp"
}

# Real arm64 programs for tests/bats/tag.bats (coreutils' sort, sed, grep,
# gawk and the libraries they need besides libc), unpacked into
# SYSROOT/programs: run under qemu-user with that folder's libraries.
fetch_programs() {
  local dir=$sysroot/programs tmp
  [[ -x $dir/usr/bin/gawk ]] && return 0
  tmp=$(mktemp -d)
  chmod 777 "$tmp"
  (cd "$tmp" && apt-get download -qq coreutils:arm64 sed:arm64 grep:arm64 gawk:arm64 \
    libsigsegv2:arm64 libmpfr6:arm64 libgmp10:arm64 libreadline8:arm64 \
    libtinfo6:arm64 libpcre2-8-0:arm64 libselinux1:arm64 libacl1:arm64 \
    libattr1:arm64 >/dev/null)
  mkdir -p "$dir"
  for d in "$tmp"/*.deb; do
    dpkg-deb -x "$d" "$dir"
  done
  rm -rf "$tmp"
}

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} > 0 || added)); then
  echo "rtl: installing ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  ((${#missing[@]} == 0)) ||
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
fetch_jemalloc
fetch_programs
