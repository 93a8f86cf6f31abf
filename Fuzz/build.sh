#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/Targets/*) into .build-fuzz, release, with libFuzzer's
# coverage instrumentation and AddressSanitizer on every module (MotionEngine, MotionHTTP and
# the dependencies). MOTION_FUZZ=1 makes Package.swift declare the targets; ordinary builds
# never see them. Usage: Fuzz/build.sh [Target...]  (default: all five)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzJSON FuzzDocument FuzzSVGPath FuzzEasing FuzzHTTP)
start=$(date +%s)
for target in "${targets[@]}"; do
    # One product at a time: motion-server has its own main, which libFuzzer's would clash with.
    # Not `--sanitize=fuzzer --sanitize=address`: SwiftPM passes those as two -sanitize flags in
    # no fixed order, and swiftc keeps only the last one (either no coverage or no ASan, varying
    # from one build to the next). `--sanitize=fuzzer` tells SwiftPM that libFuzzer supplies
    # `main`; the single -sanitize=fuzzer,address after it is what swiftc applies.
    MOTION_FUZZ=1 "$SWIFT" build --scratch-path .build-fuzz -c release \
        --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --product "$target"
done
echo "fuzz build: $(( $(date +%s) - start )) s for ${targets[*]}"
