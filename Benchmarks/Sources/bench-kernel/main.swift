// Workload 1 (Benchmarks/README.md): the spring kernel, b3ll/Motion's own benchmark (seed 003).
//
// 5000 springs of 64 lanes each (response 0.5, dampingRatio 0.987, 0 → 320, velocity 0);
// each iteration advances every lane by one 1/60 s step (iteration k evaluates t = k/60 in
// closed form) and stores its position and velocity. One warm-up, 20 timed iterations, median.
// The C reference (c/spring_kernel.c, gcc -O2) does the same arithmetic on the same layout;
// run.sh alternates the two processes and divides.
//
// Usage: bench-kernel lanes|perlane|lanebasis   (prints one SAMPLE line)
//   lanes      SpringModes.basis(at:) once per spring, then SpringKernel.value(basis:) and
//              velocity(basis:) for its 64 lanes (how a 64-lane spring is meant to be animated);
//   perlane    SpringKernel.value(at:) and velocity(at:) on every lane;
//   lanebasis  every lane evaluates its basis once (modes.basis(at:)) for both position and
//              velocity: what a kernel call returning both would cost (information).
import BenchSupport
import MotionEngine

let springs = 5000, lanes = 64, iterations = 20
let variant = CommandLine.arguments.dropFirst().first ?? "lanes"
guard ["lanes", "perlane", "lanebasis"].contains(variant) else {
    say("usage: bench-kernel lanes|perlane|lanebasis")
    exit(2)
}

let parameters = SpringParameters.response(0.5, dampingRatio: 0.987)
let count = springs * lanes
let modes = (0..<springs).map { _ in SpringModes(parameters) }
var kernels: [SpringKernel] = []
kernels.reserveCapacity(count)
for _ in 0..<count {
    kernels.append(SpringKernel(parameters: parameters, from: 0, to: 320, velocity: 0))
}
var position = [Double](repeating: 0, count: count)
var velocity = [Double](repeating: 0, count: count)

/// Advances every lane to time t (shared basis per spring).
@inline(never)
func stepLanes(_ t: Double, _ modes: UnsafeBufferPointer<SpringModes>, _ kernels: UnsafeBufferPointer<SpringKernel>,
               _ x: UnsafeMutableBufferPointer<Double>, _ v: UnsafeMutableBufferPointer<Double>) {
    for s in 0..<springs {
        let basis = modes[s].basis(at: max(t, 0))
        let base = s * lanes
        for l in base..<(base + lanes) {
            let kernel = kernels[l]
            x[l] = kernel.value(basis: basis)
            v[l] = kernel.velocity(basis: basis)
        }
    }
}

/// Advances every lane to time t: `value(at:)` and `velocity(at:)` of each lane.
///
/// The lane is read into a local first, as `stepLanes` does: `x` could otherwise overlap
/// `kernels` as far as the optimiser knows, so the store of the position would force it to
/// read the lane again and evaluate the basis a second time for the velocity. The C
/// reference gets the same knowledge for free (its arrays are distinct `malloc` blocks in the
/// one function), and gcc evaluates the basis once a lane (one `exp`, one `sincos`); with the
/// copy and `SpringModes.basis(clampingAt:)` the Swift loop does too (one `exp`, `cos`, `sin`
/// a lane, where it made two of each).
@inline(never)
func stepPerLane(_ t: Double, _ kernels: UnsafeBufferPointer<SpringKernel>,
                 _ x: UnsafeMutableBufferPointer<Double>, _ v: UnsafeMutableBufferPointer<Double>) {
    for i in 0..<kernels.count {
        let kernel = kernels[i]
        x[i] = kernel.value(at: t)
        v[i] = kernel.velocity(at: t)
    }
}

/// Advances every lane to time t (each lane evaluates its basis once, for both).
@inline(never)
func stepLaneBasis(_ t: Double, _ kernels: UnsafeBufferPointer<SpringKernel>,
                   _ x: UnsafeMutableBufferPointer<Double>, _ v: UnsafeMutableBufferPointer<Double>) {
    for i in 0..<kernels.count {
        let basis = kernels[i].modes.basis(at: max(t, 0))
        x[i] = kernels[i].value(basis: basis)
        v[i] = kernels[i].velocity(basis: basis)
    }
}

var times: [Double] = []
modes.withUnsafeBufferPointer { modes in
    kernels.withUnsafeBufferPointer { kernels in
        position.withUnsafeMutableBufferPointer { x in
            velocity.withUnsafeMutableBufferPointer { v in
                for iteration in 0...iterations {
                    // Iteration 0 is the warm-up (t = 0); iteration k advances to k/60 s.
                    let t = Double(iteration) / 60.0
                    let start = nowNanos()
                    switch variant {
                    case "lanes": stepLanes(t, modes, kernels, x, v)
                    case "perlane": stepPerLane(t, kernels, x, v)
                    default: stepLaneBasis(t, kernels, x, v)
                    }
                    let elapsed = Double(nowNanos() - start) / 1e6
                    if iteration > 0 { times.append(elapsed) }
                }
            }
        }
    }
}

var checksum = 0.0
for i in 0..<count { checksum += position[i] + velocity[i] }
let summary = Summary(times)
sample("kernel.swift.\(variant)", [("ms", summary.median), ("it_min", summary.min), ("it_max", summary.max),
                                    ("checksum", checksum)])
