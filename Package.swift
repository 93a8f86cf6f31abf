// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "MotionServer",
    products: [
        .library(name: "MotionEngine", targets: ["MotionEngine"]),
        .executable(name: "motion-server", targets: ["MotionServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // zlib for gzip/deflate answers (Debian's zlib1g-dev; already on every Swift image).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // ThreadSanitizer's annotations for `InlineLock` (hooks.h): header only, no library.
        .systemLibrary(name: "CSanitizerHooks"),
        // glibc's `sincos`, which Swift's Glibc module does not declare (math_extras.h).
        .systemLibrary(name: "CMathExtras"),
        // Release builds drop Swift's run-time exclusivity checks here too, as in MotionHTTP
        // below: the scheduler's event lists, clock and queue are class properties touched on
        // every action and event, and each access went through swift_beginAccess and its
        // thread-local access set (the small document: 179,155 → 175,436 instructions a request,
        // callgrind, Benchmarks/README.md twelfth round). Debug builds, and so every test and
        // sanitizer run, keep them, and so do the fuzz builds (release, MOTION_FUZZ=1), where
        // hostile input reaches the engine.
        .target(
            name: "MotionEngine",
            dependencies: ["CSanitizerHooks", "CMathExtras"],
            swiftSettings: Context.environment["MOTION_FUZZ"] == "1" ? []
                : [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        // libmicrohttpd's own refusals (400, 413, 414, 431, 505) rewritten as problem+json by
        // interposing the two library functions they go through (library_refusals.c); the
        // linked binary must export both for the library's calls to bind to them.
        .target(
            name: "CLibraryRefusals",
            dependencies: ["CMicroHTTPD"],
            linkerSettings: [.unsafeFlags([
                "-Xlinker", "--export-dynamic-symbol=MHD_create_response_from_buffer",
                "-Xlinker", "--export-dynamic-symbol=MHD_queue_response",
            ])]
        ),
        // The HTTP service: everything but `main`, so that fuzz targets can link it.
        .target(
            name: "MotionHTTP",
            dependencies: [
                "MotionEngine",
                "CMicroHTTPD",
                "CLibraryRefusals",
                "CZlib",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // openapi.yaml is a link to the repository's copy, compiled into the binary, and so
            // is the playground page served at `GET /` (docs/playground.md).
            resources: [
                .embedInCode("openapi.yaml"),
                .embedInCode("Playground/index.html"),
                .embedInCode("Playground/playground.css"),
                .embedInCode("Playground/examples.js"),
                .embedInCode("Playground/app.js"),
                .embedInCode("Playground/tools.js"),
            ],
            // Release builds drop Swift's run-time exclusivity checks in this module: on the
            // stream path (the pacer, `PacedStream`, `FrameStream`: class properties passed
            // `inout` across overridable calls) they cost about 1,490 of 7,540 instructions a
            // frame (swift_beginAccess and its thread-local access set; callgrind, 100
            // streams at 60 fps, Benchmarks/README.md "Direct writes"). Debug builds, and so
            // every test and sanitizer run, keep them.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .executableTarget(name: "MotionServer", dependencies: ["MotionHTTP"]),
        .testTarget(name: "MotionEngineTests", dependencies: ["MotionEngine"]),
        .testTarget(name: "MotionServerTests", dependencies: ["MotionEngine", "MotionHTTP"]),
    ]
)

// libFuzzer targets (Fuzz/, docs/fuzzing.md), only with MOTION_FUZZ=1 so that ordinary builds
// and tests never see them: `Fuzz/build.sh` builds them into .build-fuzz with
// `-Xswiftc -sanitize=fuzzer,address`.
if Context.environment["MOTION_FUZZ"] == "1" {
    let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
        ("FuzzJSON", ["MotionEngine"]),
        ("FuzzDocument", ["MotionEngine"]),
        ("FuzzSVGPath", ["MotionEngine"]),
        ("FuzzEasing", ["MotionEngine"]),
        ("FuzzHTTP", ["MotionHTTP"]),
    ]
    for fuzz in fuzzTargets {
        package.targets.append(.executableTarget(
            name: fuzz.name, dependencies: fuzz.dependencies, path: "Fuzz/Targets/\(fuzz.name)",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
    }
}
