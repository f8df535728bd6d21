#!/usr/bin/env bash
# `make test`'s pytest: the QEMU guests (tests/vm, about 20 minutes under TCG) in a pytest of
# their own beside everything else, since much of either half waits on a guest, an app or a
# browser. Each half has its own temporary root; the guests' report follows the rest's.
# Extra arguments go to the main half (e.g. `bash scripts/test.sh -x`). Fails if either half does.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTEST=${VENV:-.venv}/bin/pytest
vm_log=$(mktemp --suffix=-vm-tests.log)
vm_tmp=$(mktemp -d --suffix=-vm-tests)
trap 'rm -rf "$vm_tmp"' EXIT

echo "test.sh: tests/vm runs beside the rest; its report is printed after theirs"
PYTEST_DEBUG_TEMPROOT=$vm_tmp "$PYTEST" -q -p no:cacheprovider tests/vm >"$vm_log" 2>&1 &
vm=$!
"$PYTEST" -q --ignore=tests/vm "$@"
rest=$?
wait "$vm"
vm_status=$?
echo "== tests/vm (beside the rest) =="
cat "$vm_log"
rm -f "$vm_log"
echo "test.sh: the rest exited $rest, tests/vm exited $vm_status"
[ "$rest" -eq 0 ] && [ "$vm_status" -eq 0 ]
