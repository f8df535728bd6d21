#!/usr/bin/env bash
# The whole test suite, as `make test` runs it: the QEMU guests (tests/vm), then the closed-set
# recognizer's tests, in one pytest run beside another for everything else. A guest spends much
# of its time booting and waiting on itself, and the voice tests on audio paced in real time, so
# on two cores the two runs beside each other end well before they would one after the other;
# the closed-set and barge-in tests go with the guests, the voice-profile tests with the rest, so
# that the two runs end near each other (docs/measurements/device-vm.md). The guests' output is
# shown when both are done.
# Fails when either run fails (pytest's exit 5, "no tests collected", included).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
PYTEST="${VENV:-.venv}/bin/pytest"
mkdir -p .cache
guests_log=.cache/test-vm.log
beside_guests=(tests/vm tests/integration/test_voice_closed_set.py
               tests/integration/test_voice_barge_in.py)

"$PYTEST" -q -p no:cacheprovider "${beside_guests[@]}" >"$guests_log" 2>&1 &
guests=$!
# A stopped `make test` (Ctrl-C, CI's timeout) stops the guests' run too.
trap 'kill "$guests" 2>/dev/null' EXIT

"$PYTEST" -q "${beside_guests[@]/#/--ignore=}"
rest=$?
wait "$guests"
vm=$?
trap - EXIT

echo "=== ${beside_guests[*]}, run beside the rest ==="
cat "$guests_log"
echo "${beside_guests[*]}: pytest exit $vm; the rest: pytest exit $rest"
[ "$rest" -eq 0 ] && [ "$vm" -eq 0 ]
