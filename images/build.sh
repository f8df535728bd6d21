#!/usr/bin/env bash
# Build a bootable appliance image from Debian's own packages: mmdebstrap makes the root file
# system, genimage the partitioned disk (no loop devices, so it runs in a container as root).
#
#   images/build.sh amd64 OUT        a PC / QEMU image (OUT/disk.img, OUT/vmlinuz, OUT/initrd.img)
#   images/build.sh amd64-test OUT   the same plus what the booted-VM test drives (tests/vm_device)
#   images/build.sh pi OUT           a Raspberry Pi 3/4 image (arm64), OUT/disk.img to flash
#
# Layers: packages/common.txt + packages/ARCH.txt are the base root file system, cached by their
# hash in $APPLIANCE_IMAGE_CACHE (default ~/.cache/appliance/images); the project (a venv with its
# Python dependencies, the speech models and the voice, which are Python packages), systemd/ and
# rootfs/ overlays are laid on a copy of it every build. docs/device.md says what each part does.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGES=$REPO/images
TARGET=${1:?usage: images/build.sh amd64|amd64-test|pi OUT}
OUT=${2:?usage: images/build.sh amd64|amd64-test|pi OUT}
CACHE=${APPLIANCE_IMAGE_CACHE:-$HOME/.cache/appliance/images}
SUITE=bookworm
EXTRAS=voice,web,desktop  # the language model is Ollama's (provisioned on first boot) or none

case "$TARGET" in
    amd64 | amd64-test) ARCH=amd64 ;;
    pi) ARCH=arm64 ;;
    *) echo "build: unknown target '$TARGET' (amd64, amd64-test or pi)" >&2; exit 2 ;;
esac
say() { printf 'image: %s\n' "$*" >&2; }
die() { printf 'image: error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap and chroot need it; no loop devices are used)"
for tool in mmdebstrap genimage mkfs.ext4 mkfs.vfat mcopy; do
    command -v "$tool" >/dev/null || die "$tool missing: run 'bash scripts/setup.sh'"
done
mkdir -p "$CACHE" "$OUT"
OUT=$(cd "$OUT" && pwd)
exec 9>"$CACHE/.build-$ARCH.lock"
flock 9
started=$SECONDS

packages() { grep -hv '^\s*#' "$@" | awk 'NF { print $1 }' | paste -sd, -; }

# 1. The base root file system: Debian packages only, cached by the package lists' hash.
lists=("$IMAGES/packages/common.txt" "$IMAGES/packages/$([ "$ARCH" = arm64 ] && echo pi || echo amd64).txt")
key=$(cat "${lists[@]}" <(echo "$SUITE $ARCH") | sha256sum | cut -c1-16)
base=$CACHE/base-$ARCH-$key.tar
if [ ! -f "$base" ]; then
    if [ "$ARCH" = arm64 ]; then  # the Pi's packages' maintainer scripts run under qemu-user
        [ -e /proc/sys/fs/binfmt_misc/register ] ||
            mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
        update-binfmts --enable qemu-aarch64 2>/dev/null || true
    fi
    say "base $ARCH root file system with mmdebstrap (a few minutes; cached as $(basename "$base"))"
    mmdebstrap --quiet --format=tar --variant=apt --architectures="$ARCH" \
        --components=main,non-free-firmware --include="$(packages "${lists[@]}")" \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
        "$SUITE" "$CACHE/partial-$ARCH.tar" \
        "deb http://deb.debian.org/debian $SUITE main non-free-firmware" \
        "deb http://deb.debian.org/debian $SUITE-updates main non-free-firmware" \
        "deb http://deb.debian.org/debian-security $SUITE-security main non-free-firmware"
    mv "$CACHE/partial-$ARCH.tar" "$base"
    find "$CACHE" -maxdepth 1 -name "base-$ARCH-*.tar" ! -name "$(basename "$base")" -delete
fi
[ -z "${BASE_ONLY:-}" ] || { echo "$base"; exit 0; }

# 2. The project's Python packages as wheels. amd64 wheels are built here, where pip has its
# cache; the Pi's are installed by pip inside the arm64 root (under qemu-user) instead.
work=$(mktemp -d "$CACHE/work-$TARGET.XXXXXX")
root=$work/root
cleanup() {
    for m in dev/pts dev proc sys; do umount "$root/$m" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$root" "$work/wheels"
pip_wheel() {  # pip's notes about absent configured package folders would bury the progress
    PIP_DISABLE_PIP_VERSION_CHECK=1 "${PYTHON:-python3}" -m pip wheel -q "$@" </dev/null \
        2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
if [ "$ARCH" = amd64 ]; then
    # The dependencies' wheels are cached by the hash of the dependency lists; the project's own
    # wheel is built every time.
    deps=$CACHE/wheels-$ARCH-$("${PYTHON:-python3}" -c 'import json, sys, tomllib
p = tomllib.load(open(sys.argv[1], "rb"))["project"]
print(json.dumps([p["dependencies"], p["optional-dependencies"]], sort_keys=True))' \
        "$REPO/pyproject.toml" | sha256sum | cut -c1-16)
    if [ ! -d "$deps" ]; then
        say "wheels of the project's dependencies (extras $EXTRAS; cached as $(basename "$deps"))"
        pip_wheel -w "$deps.partial" "${REPO}[$EXTRAS]"
        rm -f "$deps.partial"/appliance-*.whl
        mv "$deps.partial" "$deps"
        find "$CACHE" -maxdepth 1 -name "wheels-$ARCH-*" ! -name "$(basename "$deps")" \
            -exec rm -rf {} +
    fi
    cp "$deps"/*.whl "$work/wheels/"
    pip_wheel --no-deps -w "$work/wheels" "$REPO"
fi

# 3. The root file system: the base, the project's files, the venv, users and enabled units.
say "root file system for $TARGET"
tar -C "$root" -xf "$base"
install -d "$root/usr/lib/systemd/system" "$root/usr/lib/systemd/user" "$root/usr/lib/sysusers.d" \
    "$root/usr/lib/tmpfiles.d" "$root/usr/lib/modules-load.d" "$root/usr/lib/udev/rules.d" \
    "$root/usr/lib/appliance" "$root/etc/appliance"
cp "$REPO"/systemd/system/* "$root/usr/lib/systemd/system/"
cp "$REPO"/systemd/user/* "$root/usr/lib/systemd/user/"
cp "$REPO/systemd/appliance.sysusers" "$root/usr/lib/sysusers.d/appliance.conf"
cp "$REPO/systemd/appliance.tmpfiles" "$root/usr/lib/tmpfiles.d/appliance.conf"
cp "$REPO/systemd/uinput.conf" "$root/usr/lib/modules-load.d/uinput.conf"
cp "$REPO/hardware/70-appliance.rules" "$root/usr/lib/udev/rules.d/70-appliance.rules"
install -m 0755 "$REPO/systemd/kiosk-session" "$root/usr/lib/appliance/kiosk-session"
install -m 0755 "$REPO/systemd/kiosk-start" "$root/usr/lib/appliance/kiosk-start"
install -m 0755 "$REPO/systemd/first-boot" "$root/usr/lib/appliance/first-boot"
install -m 0644 "$REPO/systemd/pam-appliance-kiosk" "$root/etc/pam.d/appliance-kiosk"
install -D -m 0644 "$REPO/docs/device.md" "$root/usr/share/doc/appliance/device.md"
cp -a "$IMAGES/rootfs/common/." "$root/"
case "$TARGET" in
    amd64-test) cp -a "$IMAGES/rootfs/amd64/." "$IMAGES/rootfs/test/." "$root/"
        install -m 0755 "$REPO/tests/apps/gtk_test_app.py" "$root/usr/lib/appliance/gtk_test_app.py" ;;
    amd64) cp -a "$IMAGES/rootfs/amd64/." "$root/" ;;
    pi) cp -a "$IMAGES/rootfs/pi/." "$root/" ;;
esac
cp -a "$work/wheels" "$root/tmp/wheels"
if [ "$ARCH" = arm64 ]; then
    mkdir -p "$root/tmp/src"
    tar -C "$REPO" --exclude=./.venv --exclude=./.cache --exclude=./.git -cf - . | tar -C "$root/tmp/src" -xf -
fi
mount --bind /dev "$root/dev"; mount --bind /dev/pts "$root/dev/pts"
mount -t proc proc "$root/proc"; mount -t sysfs sysfs "$root/sys"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
in_root python3 -m venv --system-site-packages /opt/appliance
if [ "$ARCH" = amd64 ]; then
    in_root /opt/appliance/bin/pip install -q --no-index --find-links /tmp/wheels "appliance[$EXTRAS]"
else
    # Build tools only for the few sdists (pyaudio, evdev, python-uinput), then removed again;
    # the base keeps no package lists (mmdebstrap empties them), so they are fetched first.
    in_root apt-get update -q
    in_root apt-get install -y -q --no-install-recommends gcc libc6-dev python3-dev portaudio19-dev
    # pip trusts what the building machine trusts (a proxy's CA, say), for this step only.
    cp -L "${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}" "$root/tmp/build-ca.crt"
    # (as PIP_CERT, which pip's own build subprocesses inherit; --cert they do not)
    in_root env PIP_CERT=/tmp/build-ca.crt /opt/appliance/bin/pip install -q "/tmp/src[${EXTRAS}]"
    rm -f "$root/tmp/build-ca.crt"
    in_root apt-get purge -y -q --auto-remove gcc libc6-dev python3-dev portaudio19-dev
fi
ln -sf /opt/appliance/bin/appliance "$root/usr/bin/appliance"
rm -rf "$root/tmp/wheels" "$root/tmp/src" "$root/root/.cache"
in_root systemd-sysusers
# The data partition's mount point, owned by the appliance (genimage makes it a partition).
install -d -m 0750 "$root/var/lib/appliance"
in_root chown appliance:appliance /var/lib/appliance
in_root systemctl set-default graphical.target
if [ "$TARGET" = pi ]; then  # cmdline.txt and config.txt again, now with rootfs/pi's settings
    kernel_version=$(basename "$(find "$root/lib/modules" -mindepth 1 -maxdepth 1 | head -1)")
    in_root /etc/kernel/postinst.d/z50-raspi-firmware "$kernel_version"
fi
in_root systemctl enable appliance-kiosk.service appliance-web.service appliance-first-boot.service
in_root systemctl --global enable appliance.service
[ "$TARGET" = amd64-test ] && in_root systemctl enable appliance-test-agent.service
in_root apt-get clean
for m in dev/pts dev proc sys; do umount "$root/$m"; done
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
printf 'appliance %s\n' "$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)" \
    > "$root/etc/appliance/image-version"

# 4. The disk: boot, root and data partitions, made by genimage from the root's folders.
say "disk image with genimage"
# The kernel and initrd beside the disk: QEMU boots them directly (-kernel), on arm64 too.
cp "$root"/boot/vmlinuz-* "$OUT/vmlinuz"
cp "$root"/boot/initrd.img-* "$OUT/initrd.img"
config=$IMAGES/genimage-$([ "$ARCH" = amd64 ] && echo amd64 || echo pi).cfg
rm -rf "$work/gen-tmp" "$OUT/disk.img"
if ! genimage --config "$config" --rootpath "$root" --tmppath "$work/gen-tmp" \
    --inputpath "$work" --outputpath "$work/out" >"$work/genimage.log" 2>&1; then
    tail -n 20 "$work/genimage.log" >&2
    die "genimage failed"
fi
mv "$work/out/disk.img" "$OUT/disk.img"
say "built $OUT/disk.img ($(du -h --apparent-size "$OUT/disk.img" | cut -f1), $((SECONDS - started)) s)"
