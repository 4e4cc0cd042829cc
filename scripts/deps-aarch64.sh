#!/usr/bin/env bash
# Install what the aarch64 cross build and its tests under qemu-user need,
# only what is missing: the arm64 architecture in dpkg, Debian's cross
# compilers, the arm64 -dev packages rtl links with, qemu-user-static. Used
# by make test-aarch64; a no-op on a machine that has them all.
set -euo pipefail

packages=(
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static
  libc6-dev:arm64 libcapstone-dev:arm64 libunwind-dev:arm64
  libjemalloc-dev:arm64 libinih-dev:arm64 libjansson-dev:arm64
  libelf-dev:arm64
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

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]} == 0 && added == 0)) && exit 0

echo "rtl: installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
((${#missing[@]} == 0)) && exit 0
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
