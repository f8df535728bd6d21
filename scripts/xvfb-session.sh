#!/usr/bin/env bash
# Run a command inside a private Xvfb display and D-Bus session, with the AT-SPI bus on demand:
#   scripts/xvfb-session.sh -- appliance say "read the screen" --desktop atspi
# Everything started here stops when the command ends.
set -euo pipefail
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: $0 -- COMMAND [ARGS...]" >&2; exit 2; }
command -v Xvfb >/dev/null || { echo "xvfb-session: Xvfb missing (apt-get install xvfb)" >&2; exit 1; }
export XDG_RUNTIME_DIR=$(mktemp -d)
fifo=$XDG_RUNTIME_DIR/displayfd
mkfifo "$fifo"
Xvfb -displayfd 4 -screen 0 1024x768x24 -nolisten tcp 4>"$fifo" &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; rm -rf "$XDG_RUNTIME_DIR"' EXIT
read -r -t 10 display < "$fifo" || { echo "xvfb-session: Xvfb did not start" >&2; exit 1; }
export DISPLAY=:$display GTK_A11Y=atspi QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 ACCESSIBILITY_ENABLED=1
unset NO_AT_BRIDGE
dbus-run-session -- "$@"
