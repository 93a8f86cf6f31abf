// swift-tools-version:6.0
// The benchmarks: a package of their own, so the main package and its CI are untouched.
// Build with `swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build`;
// `Benchmarks/run.sh` (or `make bench`) builds and runs everything.
import PackageDescription

// A path dependency's identity is its directory name, which is whatever the clone is called.
let rootIdentity = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "main").lowercased()

let engine: Target.Dependency = .product(name: "MotionEngine", package: rootIdentity)

let package = Package(
    name: "MotionBenchmarks",
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        .target(name: "BenchSupport", dependencies: [engine]),
        .executableTarget(name: "bench-kernel", dependencies: ["BenchSupport", engine]),
        .executableTarget(name: "bench-timeline", dependencies: ["BenchSupport", engine]),
        .executableTarget(name: "bench-scaling", dependencies: ["BenchSupport", engine]),
        .executableTarget(name: "bench-exports", dependencies: ["BenchSupport", engine]),
    ]
)
