import Foundation

/// MotionMachine's `PhysicsMotion` in closed form (docs/nodes.md#physics): a body with friction,
/// optionally bouncing between two walls, as an exact function of the time since its leg
/// started.
///
/// The initializer precomputes the whole motion: one `ExponentialLaw` piece per flight between
/// contacts, the exact contact times and the rest time. Units: positions in the property's
/// units, velocities in units/s, times in s since the leg start.
///
/// Construction **throws** `PhysicsKernel.Failure` when the motion cannot be represented:
/// more wall contacts before rest than `maxContacts`, or a rest time that is not finite. The
/// caller reports either as a 422 with `failure.message`.
public struct PhysicsKernel: Sendable, Equatable {
    /// Why a physics motion was rejected (turn into a 422 with `message`).
    public enum Failure: Error, Sendable, Equatable {
        /// More than `limit` wall contacts happen before the body rests.
        case tooManyContacts(limit: Int)
        /// The body never comes to rest (rest time not finite).
        case neverRests

        public var message: String {
            switch self {
            case .tooManyContacts(let limit):
                return "the body hits the walls more than \(limit) times before it rests; raise friction, lower restitution or lower the velocity"
            case .neverRests:
                return "the body never comes to rest with this friction and restVelocity"
            }
        }
    }

    /// One flight: from `start` (s since the leg start) the body follows `law`.
    public struct Piece: Sendable, Equatable {
        public let start: Double
        public let law: ExponentialLaw
    }

    /// Default `restitution` (docs/README.md).
    public static let defaultRestitution = 0.75
    /// Default `restVelocity` (units/s, docs/README.md).
    public static let defaultRestVelocity = 0.95
    /// Default bound on wall contacts before rest.
    public static let defaultMaxContacts = 10_000

    /// The flights, in time order; the first starts at 0.
    public let pieces: [Piece]
    /// The exact times (s) of the wall contacts, ascending (a start on a wall moving outward
    /// contributes 0).
    public let contactTimes: [Double]
    /// When the body rests (s): `|v|` has fallen to `restVelocity`.
    public let restTime: Double
    /// Where it rests (held from `restTime` on, no snapping).
    public let restValue: Double
    /// The walls, if any.
    public let walls: ClosedRange<Double>?
    /// Decay rate `λ = −ln(1 − friction)` (1/s).
    public let lambda: Double

    /// A leg of a `physics` node: from `from` with `velocity`; with `collisions` and
    /// `from ≠ to` the walls are `min(from, to)` and `max(from, to)`.
    public init(
        from: Double, to: Double, velocity: Double, friction: Double,
        restitution: Double = PhysicsKernel.defaultRestitution,
        restVelocity: Double = PhysicsKernel.defaultRestVelocity,
        collisions: Bool = false, maxContacts: Int = PhysicsKernel.defaultMaxContacts
    ) throws(Failure) {
        let walls: ClosedRange<Double>? = collisions && from != to ? Swift.min(from, to)...Swift.max(from, to) : nil
        try self.init(position: from, velocity: velocity, friction: friction, restitution: restitution,
                      restVelocity: restVelocity, walls: walls, maxContacts: maxContacts)
    }

    /// The general form: any start position and velocity, optional walls. The reverse leg of a
    /// `physics` node is this, from the forward leg's `restValue` with `−v0` and the same walls.
    ///
    /// - Parameters:
    ///   - x0: start position; with walls it is clamped into them.
    ///   - v0: start velocity (units/s).
    ///   - friction: `f ∈ (0, 1]`: the velocity is multiplied by `1 − f` every second; 1 stops
    ///     at once (no contacts, even on a wall).
    ///   - restitution: at a contact the velocity becomes `−restitution·v` (0…1).
    ///   - restVelocity: the body rests when `|v|` falls to this (units/s, > 0).
    ///   - walls: `lo...hi`; at a contact the value is exactly the wall. A start on a wall
    ///     moving outward bounces at once (a contact at time 0).
    ///   - maxContacts: more contacts than this before rest throws `.tooManyContacts`.
    public init(
        position x0: Double, velocity v0: Double, friction: Double,
        restitution: Double = PhysicsKernel.defaultRestitution,
        restVelocity: Double = PhysicsKernel.defaultRestVelocity,
        walls: ClosedRange<Double>?, maxContacts: Int = PhysicsKernel.defaultMaxContacts
    ) throws(Failure) {
        let lambda = ExponentialLaw.lambda(friction: friction)
        self.lambda = lambda
        self.walls = walls
        var x = walls.map { Swift.min(Swift.max(x0, $0.lowerBound), $0.upperBound) } ?? x0
        var v = v0
        var t = 0.0
        var pieces: [Piece] = []
        var contacts: [Double] = []

        while true {
            // At rest already (or friction 1): the body does not move from here.
            if Swift.abs(v) <= restVelocity || lambda == .infinity {
                pieces.append(Piece(start: t, law: ExponentialLaw(position: x, velocity: 0, lambda: lambda)))
                restTime = t
                restValue = x
                break
            }
            if let walls, (x <= walls.lowerBound && v < 0) || (x >= walls.upperBound && v > 0) {
                // On a wall moving outward: bounce at once.
                contacts.append(t)
                guard contacts.count <= maxContacts else { throw .tooManyContacts(limit: maxContacts) }
                x = v < 0 ? walls.lowerBound : walls.upperBound
                v = -restitution * v
                continue
            }
            let law = ExponentialLaw(position: x, velocity: v, lambda: lambda)
            pieces.append(Piece(start: t, law: law))
            let rest = law.restTime(restVelocity: restVelocity)
            if let walls {
                let wall = v > 0 ? walls.upperBound : walls.lowerBound
                let distance = Swift.abs(wall - x)
                // A contact at the very instant it would rest still counts as a contact.
                if let contact = law.time(toTravel: distance), contact <= rest {
                    let arrival = law.velocity(afterTravelling: distance)
                    t += contact
                    contacts.append(t)
                    guard contacts.count <= maxContacts else { throw .tooManyContacts(limit: maxContacts) }
                    x = wall
                    v = -restitution * arrival
                    continue
                }
            }
            guard rest.isFinite, (t + rest).isFinite else { throw .neverRests }
            restTime = t + rest
            restValue = law.value(at: rest)
            break
        }
        self.pieces = pieces
        self.contactTimes = contacts
    }

    /// The position `t` seconds after the leg start (`restValue` from `restTime` on). With
    /// walls it never leaves them, not even by rounding just before a contact.
    public func value(at t: Double) -> Double {
        if t >= restTime { return restValue }
        let piece = self.piece(at: t)
        let x = piece.law.value(at: t - piece.start)
        guard let walls else { return x }
        return Swift.min(Swift.max(x, walls.lowerBound), walls.upperBound)
    }

    /// The velocity `t` seconds after the leg start (units/s; 0 from `restTime` on).
    /// Right-continuous: at a contact it is the velocity after the bounce.
    public func velocity(at t: Double) -> Double {
        if t >= restTime { return 0 }
        let piece = self.piece(at: t)
        return piece.law.velocity(at: t - piece.start)
    }

    /// The last piece starting at or before `t` (binary search).
    private func piece(at t: Double) -> Piece {
        var low = 0
        var high = pieces.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if pieces[mid].start <= t { low = mid } else { high = mid - 1 }
        }
        return pieces[low]
    }
}
