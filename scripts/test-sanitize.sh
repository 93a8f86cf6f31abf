#!/usr/bin/env bash
# `make test-sanitize`: the Swift test suites under AddressSanitizer, then ThreadSanitizer,
# each in its own scratch path (.build-asan, .build-tsan). MotionServerTests start the
# motion-server of the same scratch path (MOTION_SERVER_BIN), so the server runs sanitized
# too. Every sanitized process writes its reports to <scratch>/reports/<kind>.<pid>; any report
# fails the run. Usage: scripts/test-sanitize.sh [address|thread]...  (default: both)
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(address thread)
failed=0
for kind in "${kinds[@]}"; do
    case $kind in
        address) scratch=.build-asan; var=ASAN_OPTIONS; opts="detect_leaks=1:halt_on_error=0"
                 export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0" ;;
        thread) scratch=.build-tsan; var=TSAN_OPTIONS; opts="halt_on_error=0:second_deadlock_stack=1" ;;
        *) echo "unknown sanitizer $kind" >&2; exit 2 ;;
    esac
    reports="$PWD/$scratch/reports"
    rm -rf "$reports"; mkdir -p "$reports"
    echo "== $kind: build ($scratch)"
    start=$(date +%s)
    "$SWIFT" build --build-tests --sanitize="$kind" --scratch-path "$scratch" || { failed=1; continue; }
    echo "== $kind: build took $(( $(date +%s) - start )) s; tests"
    start=$(date +%s)
    # MOTION_SANITIZER lets tests skip what a sanitizer makes meaningless (RSS thresholds).
    env "$var=$opts:log_path=$reports/$kind" MOTION_SERVER_BIN="$PWD/$scratch/debug/motion-server" \
        MOTION_SANITIZER="$kind" SWIFT_BACKTRACE=enable=no \
        "$SWIFT" test --skip-build --sanitize="$kind" --scratch-path "$scratch" --disable-swift-testing
    status=$?
    echo "== $kind: tests took $(( $(date +%s) - start )) s, exit $status"
    [ $status -eq 0 ] || failed=1
    if compgen -G "$reports/*" >/dev/null; then
        echo "== $kind: sanitizer reports in $reports:"
        grep -hoE '(WARNING|ERROR): (ThreadSanitizer|AddressSanitizer|LeakSanitizer): [A-Za-z -]+' "$reports"/* | sort | uniq -c
        failed=1
    else
        echo "== $kind: no sanitizer reports"
    fi
done
exit $failed
