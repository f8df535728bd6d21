#!/usr/bin/env bash
# Make Debian's pyatspi and PyGObject (not on PyPI) importable from the project venv.
# Idempotent: links only gi/pyatspi (not the whole of dist-packages, whose other modules would
# shadow or clash with the venv's) into a folder that a .pth file puts on sys.path.
set -euo pipefail
VENV=${1:-${VENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv}}
VENV=$(cd "$VENV" && pwd)  # the .pth line must be absolute: it is read from any working dir
DIST=/usr/lib/python3/dist-packages
for mod in gi pyatspi; do
    [ -d "$DIST/$mod" ] || { echo "setup-atspi: $DIST/$mod missing (apt-get install python3-pyatspi python3-gi)" >&2; exit 1; }
done
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
LINKS="$VENV/lib/debian-a11y"
mkdir -p "$LINKS"
for mod in gi pyatspi; do
    ln -sfn "$DIST/$mod" "$LINKS/$mod"
done
echo "$LINKS" > "$SITE/debian-a11y.pth"
"$VENV/bin/python" -c 'import pyatspi, gi; gi.require_version("Atspi", "2.0")' \
    || { echo "setup-atspi: pyatspi does not import in $VENV" >&2; exit 1; }
echo "setup-atspi: pyatspi importable from $VENV"
