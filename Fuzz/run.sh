#!/usr/bin/env bash
# Runs the libFuzzer targets built by Fuzz/build.sh, one after the other, each for
# FUZZ_SECONDS (default 300) on its seed corpus (Fuzz/corpus/<target>, read only) plus a
# working corpus (.build-fuzz/corpus/<target>, where new inputs go) with its dictionary.
# Crashes, leaks and timeouts land in .build-fuzz/artifacts/ and fail the run.
# Usage: Fuzz/run.sh [Target...]  (default: all five); extra libFuzzer flags in FUZZ_FLAGS.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-300}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzJSON FuzzDocument FuzzSVGPath FuzzEasing FuzzHTTP)
bin=.build-fuzz/release
# Traps go to libFuzzer's deadly-signal handler (the Swift backtracer and ASan collide).
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}
# LeakSanitizer's false positives of the toolchain (scripts/lsan.supp), as in test-sanitize.
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
mkdir -p .build-fuzz/artifacts .build-fuzz/logs
failed=()
summary=()
for target in "${targets[@]}"; do
    [ -x "$bin/$target" ] || { echo "$bin/$target missing: run Fuzz/build.sh" >&2; exit 2; }
    mkdir -p ".build-fuzz/corpus/$target"
    log=".build-fuzz/logs/$target.log"
    echo "== $target: ${seconds} s"
    # -timeout: an input slower than 10 s is a hang; -rss_limit_mb: the default, stated.
    # shellcheck disable=SC2086
    "$bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -dict="Fuzz/$target.dict" -artifact_prefix=".build-fuzz/artifacts/$target-" ${FUZZ_FLAGS:-} \
        ".build-fuzz/corpus/$target" "Fuzz/corpus/$target" >"$log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[^ ]+' "$log" | tail -1)
    if [ $status -ne 0 ]; then
        failed+=("$target")
        summary+=("$target: FAILED (exit $status) after ${runs:-?} runs; see $log")
        grep -E '^==[0-9]+==ERROR|^SUMMARY|Fatal error|Test unit written|^    #[0-9] ' "$log" | head -20
    else
        summary+=("$target: ${runs:-?} runs in ${seconds} s (${rate:-?}/s), no crash; $cov")
    fi
done
echo "== summary"
printf '%s\n' "${summary[@]}"
[ ${#failed[@]} -eq 0 ]
