#!/usr/bin/env bash
# What `make image-pi` needs besides scripts/setup.sh's packages: qemu-user to run the arm64
# packages' maintainer scripts while mmdebstrap builds, and qemu-system-arm to try the image.
set -euo pipefail
packages=(qemu-user-static binfmt-support arch-test qemu-system-arm qemu-efi-aarch64)
missing=()
for pkg in "${packages[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" = "install ok installed" ] || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    # The same lock as scripts/setup.sh: two apt runs at once corrupt each other.
    flock "${APT_LOCK:-/tmp/apt.lock}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive flock "${APT_LOCK:-/tmp/apt.lock}" \
        apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
