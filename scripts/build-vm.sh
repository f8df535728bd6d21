#!/usr/bin/env bash
# Build (once) a throwaway QEMU guest for the uinput and switch tests: a Debian kernel, its
# uinput/evdev modules, busybox, Debian's Python 3.11 and the code under test, in a gzip cpio
# initramfs. Usage: scripts/build-vm.sh [CACHE_DIR]   (default .cache/uinput-vm). Prints the
# cache dir. The kernel and runtime are reused from the cache; the code under test is repacked
# every run (cheap), so the guest always runs the working tree. The guest runs
# tests/vm/guest_NAME.py for `guest=NAME` on the kernel command line (default: uinput).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${1:-$REPO/.cache/uinput-vm}
VENV=${VENV:-$REPO/.venv}
case "$VENV" in /*) ;; *) VENV=$REPO/$VENV ;; esac  # the Makefile exports it relative; we cd
mkdir -p "$CACHE"
cd "$CACHE"
# Test modules may build at the same time; one at a time, and initrd.gz is replaced atomically
# so a guest booting meanwhile reads a whole one.
exec 9>"$CACHE/.build.lock"
flock 9

need() { command -v "$1" >/dev/null || { echo "build-vm: $1 missing (apt-get install $2)" >&2; exit 1; }; }
need qemu-system-x86_64 qemu-system-x86
need cpio cpio
[ -x /bin/busybox ] || { echo "build-vm: /bin/busybox missing (apt-get install busybox-static)" >&2; exit 1; }
[ -x /usr/bin/python3.11 ] || { echo "build-vm: /usr/bin/python3.11 missing" >&2; exit 1; }

# 1. Kernel and modules (downloaded once with apt, the only network use).
if [ ! -f kernel/vmlinuz ]; then
    pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    [ -n "$pkg" ] || { echo "build-vm: no linux-image package found" >&2; exit 1; }
    rm -rf kernel-pkg && mkdir kernel-pkg
    (cd kernel-pkg && apt-get download "$pkg" >/dev/null)
    dpkg-deb -x kernel-pkg/*.deb kernel-pkg/root
    mkdir -p kernel
    cp kernel-pkg/root/boot/vmlinuz-* kernel/vmlinuz.tmp
    for mod in uinput evdev; do
        f=$(find kernel-pkg/root/lib/modules -name "$mod.ko*" | head -1)
        case "$f" in
            *.xz) xz -dc "$f" > "kernel/$mod.ko" ;;
            *.zst) zstd -dqc "$f" > "kernel/$mod.ko" ;;
            *) cp "$f" "kernel/$mod.ko" ;;
        esac
    done
    mv kernel/vmlinuz.tmp kernel/vmlinuz
    rm -rf kernel-pkg
fi

# 2. The runtime: busybox, Python 3.11 with its shared libraries, and the wheels' packages.
if [ ! -f runtime.done ]; then
    rm -rf runtime && mkdir -p runtime/{bin,dev,proc,sys,tmp,lib,usr/bin,usr/lib,site}
    cp /bin/busybox runtime/bin/busybox
    for app in sh mount insmod poweroff sleep cat ls mkdir echo; do ln -sf busybox "runtime/bin/$app"; done
    cp /usr/bin/python3.11 runtime/usr/bin/python3.11
    cp -a /usr/lib/python3.11 runtime/usr/lib/python3.11
    rm -rf runtime/usr/lib/python3.11/{test,idlelib,tkinter,turtledemo,ensurepip,lib2to3,pydoc_data}
    find runtime/usr/lib/python3.11 -name '__pycache__' -prune -exec rm -rf {} +
    site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    for pkg in uinput evdev pydantic pydantic_core typing_extensions.py annotated_types \
               typing_inspection; do
        cp -a "$site/$pkg" runtime/site/
    done
    cp -a "$site"/_libsuinput*.so runtime/site/ 2>/dev/null || true
    libs=$( { ldd /usr/bin/python3.11; find runtime/usr/lib/python3.11/lib-dynload runtime/site -name '*.so' -exec ldd {} \; ; } 2>/dev/null \
        | awk '/=> \// {print $3} /^\t\/lib64/ {print $1}' | sort -u)
    for lib in $libs; do
        mkdir -p "runtime$(dirname "$lib")"
        cp -L "$lib" "runtime$lib"
    done
    (cd runtime && find . | cpio -o -H newc --quiet) | gzip -1 > runtime.cpio.gz
    touch runtime.done
fi

# 3. The code under test and the guest's init, packed on every build.
rm -rf overlay && mkdir -p overlay/site/appliance/desktop overlay/site/appliance/switch
cp "$REPO/appliance/__init__.py" "$REPO/appliance/settings.py" "$REPO/appliance/limits.py" \
    overlay/site/appliance/
cp "$REPO/appliance/desktop/__init__.py" "$REPO/appliance/desktop/model.py" \
    "$REPO/appliance/desktop/roles.py" overlay/site/appliance/desktop/
cp -r "$REPO/appliance/desktop/uinput" overlay/site/appliance/desktop/
# The switch input side only (scanning and the panel need a desktop the guest does not have).
for f in __init__ model gestures devices evdev_source; do
    cp "$REPO/appliance/switch/$f.py" overlay/site/appliance/switch/
done
# doctor's device checks (the ones that need no journal, speech or screen stack).
mkdir -p overlay/site/appliance/health
for f in __init__ check doctor switch uinput; do
    cp "$REPO/appliance/health/$f.py" overlay/site/appliance/health/
done
find overlay -name '__pycache__' -prune -exec rm -rf {} +
cp "$REPO"/tests/vm/guest_*.py overlay/
# The udev rule for switches and /dev/uinput, checked with udevadm against the guest's devices
# (udevadm and its libraries come from the host's `udev` package when it is installed).
mkdir -p overlay/etc/udev/rules.d overlay/usr/bin overlay/run
cp "$REPO/hardware/70-appliance.rules" overlay/etc/udev/rules.d/
printf 'root:x:0:\nappliance:x:990:\n' > overlay/etc/group
printf 'root:x:0:0:root:/:/bin/sh\n' > overlay/etc/passwd
if udevadm=$(command -v udevadm); then
    cp "$udevadm" overlay/usr/bin/udevadm
    for lib in $(ldd "$udevadm" | awk '/=> \// {print $3}'); do
        mkdir -p "overlay$(dirname "$lib")"
        cp -L "$lib" "overlay$lib"
    done
fi
cat > overlay/init <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
insmod /kernel/evdev.ko
insmod /kernel/uinput.ko
GUEST=uinput
for arg in $(cat /proc/cmdline); do
    case "$arg" in guest=*) GUEST=${arg#guest=} ;; esac
done
echo GUEST-START
PYTHONHOME=/usr PYTHONPATH=/site PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3.11 "/guest_$GUEST.py"
echo "GUEST-EXIT $?"
poweroff -f
INIT
chmod +x overlay/init
mkdir -p overlay/kernel && cp kernel/uinput.ko kernel/evdev.ko overlay/kernel/
# The kernel unpacks concatenated compressed archives in order: runtime, then the overlay.
(cd overlay && find . | cpio -o -H newc --quiet) | gzip -1 > overlay.cpio.gz
cat runtime.cpio.gz overlay.cpio.gz > initrd.gz.tmp
mv initrd.gz.tmp initrd.gz
echo "$CACHE"
