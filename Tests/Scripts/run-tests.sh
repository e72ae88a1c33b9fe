#!/bin/sh
# `make test`: the whole suite, in two halves at once, because most of it waits (on real
# relays, syncs, tmux and timers) rather than computes. One half is the end-to-end tests of
# the command line and the view (RChatCLITests), shown as it runs; the other is every other
# test class, its output kept in a file and shown when it ends. The halves are made from the
# test bundle's own list (every class in exactly one), so none is left out as tests come.
# The bundle is run directly: two `swift test` at once would wait for each other's lock on
# .build. Exit 1 if either half failed; the last lines name the failed tests and say how
# each half ended.
#
# Usage: Tests/Scripts/run-tests.sh SWIFT   (the swift driver; the tests are built first)
set -u
swift=${1:-swift}
export SWIFT_DETERMINISTIC_HASHING=1
"$swift" build --build-tests || exit 1
bundle="$("$swift" build --show-bin-path)/rchatPackageTests.xctest"
[ -x "$bundle" ] || { echo "run-tests.sh: no test bundle at $bundle" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rchat-make-test.XXXXXX") || exit 1
"$bundle" --list-tests | grep '^[A-Za-z0-9_]*\.[A-Za-z0-9_]*/' | sed 's,/.*,,' | sort -u >"$work/classes" || exit 1
cli=$(grep '^RChatCLITests\.' "$work/classes" | paste -sd, -)
others=$(grep -v '^RChatCLITests\.' "$work/classes" | paste -sd, -)
[ -n "$cli" ] && [ -n "$others" ] || { echo "run-tests.sh: could not list the tests" >&2; exit 1; }
echo "make test: $(wc -l <"$work/classes") test classes, RChatCLITests beside the rest"

started=$(date +%s)
"$bundle" "$others" >"$work/others.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$work"; exit 1' INT TERM
{ "$bundle" "$cli"; echo $? >"$work/cli.status"; } 2>&1 | tee "$work/cli.log"
cli_status=$(cat "$work/cli.status")
wait $pid
others_status=$?
trap - INT TERM

echo
echo "=== every other test class (run beside RChatCLITests) ==="
cat "$work/others.log"
# What failed, again at the end, where a log cut to its last lines still shows it.
failures() { grep -E "error: |' failed \(" "$2" | grep -v "^Test Suite" | head -40 | sed "s,^,$1: ,"; }
failures "RChatCLITests" "$work/cli.log"
failures "other" "$work/others.log"
rm -rf "$work"
ended=$(date +%s)
summary() { if [ "$2" -eq 0 ]; then echo "$1: passed"; else echo "$1: FAILED (exit $2)"; fi; }
echo
summary "RChatCLITests" $cli_status
summary "every other test class" $others_status
echo "make test: $((ended - started)) s"
[ $cli_status -eq 0 ] && [ $others_status -eq 0 ]
