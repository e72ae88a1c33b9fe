#!/bin/sh
# `make test`: the whole suite, in two halves at once, because most of it waits (on real
# relays, syncs, tmux and timers) rather than computes. One half is the end-to-end tests of
# the command line and the view (RChatCLITests), shown as it runs; the other is every other
# test target, its output kept in a file and shown when it ends. Every test is in exactly
# one half (a filter and the same pattern skipped), so none is left out as targets come.
# Exit 1 if either half failed; the last lines say how each ended.
#
# Usage: Tests/Scripts/run-tests.sh SWIFT   (the swift driver; the tests are built first)
set -u
swift=${1:-swift}
export SWIFT_DETERMINISTIC_HASHING=1
"$swift" build --build-tests || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/rchat-make-test.XXXXXX") || exit 1
started=$(date +%s)
"$swift" test --skip-build --disable-swift-testing --skip RChatCLITests >"$work/others.log" 2>&1 &
others=$!
trap 'kill $others 2>/dev/null; rm -rf "$work"' INT TERM
"$swift" test --skip-build --disable-swift-testing --filter RChatCLITests
cli=$?
wait $others
rest=$?
trap - INT TERM

echo
echo "=== the other test targets (run beside RChatCLITests) ==="
cat "$work/others.log"
rm -rf "$work"
ended=$(date +%s)
summary() { if [ "$2" -eq 0 ]; then echo "$1: passed"; else echo "$1: FAILED (exit $2)"; fi; }
echo
summary "RChatCLITests" $cli
summary "the other test targets" $rest
echo "make test: $((ended - started)) s"
[ $cli -eq 0 ] && [ $rest -eq 0 ]
