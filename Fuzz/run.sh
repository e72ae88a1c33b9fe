#!/usr/bin/env bash
# `make fuzz [SECONDS=N]`: each libFuzzer target of rchat-fuzz for N seconds, on a copy of its
# seed corpus (Fuzz/Corpus/TARGET, read only: what the run finds stays in a scratch folder).
# Prints each target's runs and executions per second, and ends with one line
# "N targets, M runs, K crashes"; exit 1 on any crash, with the crashing input's path.
set -uo pipefail
seconds=${1:?usage: Fuzz/run.sh SECONDS FUZZER}
fuzzer=${2:?usage: Fuzz/run.sh SECONDS FUZZER}
cd "$(dirname "$0")/.."
scratch=$(mktemp -d "${TMPDIR:-/tmp}/rchat-fuzz.XXXXXX")
crashes=0 runs=0 count=0
for target in $("$fuzzer" --list); do
  mkdir -p "$scratch/$target/found" "$scratch/$target/tmp"
  log="$scratch/$target/log"
  # A crash stops the target at once (libFuzzer's default); -timeout catches a hang. No leak
  # checks (why: `__asan_default_options` in Sources/rchat-fuzz/main.swift).
  TMPDIR="$scratch/$target/tmp" SWIFT_BACKTRACE=enable=no \
    "$fuzzer" "$target" -max_total_time="$seconds" -timeout=10 -detect_leaks=0 -print_final_stats=1 \
      -artifact_prefix="$scratch/$target/" "$scratch/$target/found" "Fuzz/Corpus/$target" >"$log" 2>&1
  status=$?
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  count=$((count + 1))
  runs=$((runs + ${executed:-0}))
  if [ "$status" -ne 0 ]; then
    crashes=$((crashes + 1))
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    grep -E "ERROR|Fatal error|error:|SUMMARY|deadly signal" "$log" | head -5 >&2
    echo "$target: CRASH (exit $status) after ${executed:-?} runs; input: ${artifact:-none written}; log: $log" >&2
  else
    printf '%-18s %9s runs %7s exec/s\n' "$target" "${executed:-0}" "${speed:-0}"
  fi
done
echo "$count targets, $runs runs, $crashes crashes"
if [ "$crashes" -ne 0 ]; then
  echo "kept for the crashes: $scratch" >&2
  exit 1
fi
rm -rf "$scratch"
