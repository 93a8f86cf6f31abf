/// The timeline document every computing endpoint takes (docs/README.md), decoded and validated.
public struct TimelineDocument: Sendable {
    /// Sampling rate of the virtual clock, frames per second.
    public var fps: Double
    /// The object being animated.
    public var target: JSONObject
    /// Named motion specs (motion-interchange), kept as given.
    public var specs: JSONObject
    public var motion: MotionNode
    /// The sampled interval; nil means `[0, total duration]`.
    public var window: TimeWindow?
    public var output: OutputOptions
    /// What the document's paths charge to `EngineLimits.maxSegments` (their drawn segments,
    /// `PathGeometry.segmentWeight` each); the compiler's charges start from it.
    public var pathSegments = 0
}

/// A closed interval of virtual time, seconds.
public struct TimeWindow: Sendable, Equatable {
    public var start: Double
    public var end: Double

    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }
}

public struct OutputOptions: Sendable, Equatable {
    public enum Layout: String, Sendable, Equatable {
        /// Columnar: `times` plus one `values` array per track.
        case tracks
        /// One row per frame with whole values keyed by property path.
        case frames
    }

    public var layout: Layout = .tracks
    public var events = true
    public var final = true
    /// Adds `schedule` and `labels` to the JSON answer (docs/authoring.md, "Timelines").
    public var schedule = false
    /// `output.format` (docs/exports.md); `json` is docs/documents.md.
    public var format: OutputFormat = .json
    /// `output.simplify` (docs/exports.md); nil: every frame is written.
    public var simplify: SimplifyOptions?
    /// `output.svg` (docs/exports.md).
    public var svg = SVGOptions()
    /// `output.css` and `output.lottie` as given (docs/exports.md): read by the encoders of
    /// those formats, which report their problems under `/output/css` and `/output/lottie`.
    public var css: JSON?
    public var lottie: JSON?

    public init(layout: Layout = .tracks, events: Bool = true, final: Bool = true, schedule: Bool = false,
                format: OutputFormat = .json, simplify: SimplifyOptions? = nil, svg: SVGOptions = SVGOptions(),
                css: JSON? = nil, lottie: JSON? = nil) {
        self.layout = layout
        self.events = events
        self.final = final
        self.schedule = schedule
        self.format = format
        self.simplify = simplify
        self.svg = svg
        self.css = css
        self.lottie = lottie
    }
}

/// `repeat`: extra cycles after the first.
public enum Repetition: Sendable, Equatable {
    case count(Int)
    case infinite
}

/// Timing fields shared by every node (docs/README.md).
public struct NodeTiming: Sendable, Equatable {
    /// Seconds before the node starts; applies once, not per repeat.
    public var delay: Double = 0
    public var repetition: Repetition = .count(0)
    public var reverses = false
    /// Pause between cycles, seconds.
    public var repeatDelay: Double = 0
    /// Where the play stops (seconds after the delay), possibly part-way through a cycle:
    /// from a motion spec's fractional `count` or its `duration` repetition.
    public var playLimit: Double?

    public init(delay: Double = 0, repetition: Repetition = .count(0), reverses: Bool = false, repeatDelay: Double = 0,
                playLimit: Double? = nil) {
        self.delay = delay
        self.repetition = repetition
        self.reverses = reverses
        self.repeatDelay = repeatDelay
        self.playLimit = playLimit
    }

    /// Whether the node repeats forever.
    public var isEndless: Bool { repetition == .infinite && playLimit == nil }
}

/// One motion node of the document tree.
public indirect enum MotionNode: Sendable {
    case tween(TweenNode)
    case physics(PhysicsNode)
    case spring(SpringNode)
    case decay(DecayNode)
    case path(PathNode)
    case group(GroupNode)
    case sequence(SequenceNode)

    /// The node's id in events: its `id`, or its JSON pointer.
    public var id: String { header.id }

    /// The fields every node has.
    public var header: NodeHeader {
        switch self {
        case .tween(let node): return node.header
        case .physics(let node): return node.header
        case .spring(let node): return node.header
        case .decay(let node): return node.header
        case .path(let node): return node.header
        case .group(let node): return node.header
        case .sequence(let node): return node.header
        }
    }
}

/// Identity and timing shared by every node.
public struct NodeHeader: Sendable {
    /// `id`, or the node's JSON pointer.
    public var id: String
    public var pointer: String
    /// Pre-order position in the document: orders simultaneous, unrelated things.
    public var order: Int
    public var timing: NodeTiming
}

/// `group`: children run in parallel (MotionMachine `MotionGroup`).
public struct GroupNode: Sendable {
    public var header: NodeHeader
    public var children: [MotionNode]
    /// With `reverses`: every child finishes its forward leg before any child reverses.
    public var syncsChildren: Bool
    /// Set for a `timeline` node: where each child starts (docs/authoring.md).
    public var layout: TimelineLayout? = nil
}

/// `sequence`: steps run one after another (MotionMachine `MotionSequence`).
public struct SequenceNode: Sendable {
    public enum ReversingMode: String, Sendable, CaseIterable {
        /// The steps play again in reverse order, each moving forward.
        case sequential
        /// Forward legs out, then reverse legs back, n−1 … 0.
        case contiguous
    }

    public var header: NodeHeader
    public var steps: [MotionNode]
    public var reversingMode: ReversingMode
}

/// `tween`: duration + easing (MotionMachine `Motion`).
public struct TweenNode: Sendable {
    public var header: NodeHeader
    /// Leg duration in seconds; nil when every property carries its own.
    public var duration: Double?
    public var easing: Easing
    public var reverseEasing: Easing?
    public var properties: [TweenProperty]
    /// Additive weight (0…1) when `additive` is true, else nil.
    public var additiveWeight: Double?
    /// A `timing` spec with a spring curve: each property's leg lasts its own rest time
    /// (docs/values.md), known once its values are resolved.
    public var springTiming: MotionSpec? = nil
}

/// One `properties` entry of a tween.
public struct TweenProperty: Sendable {
    public var pointer: String
    public var path: PropertyPath
    /// Explicit start value; nil means "the current value when the node starts".
    public var from: JSON?
    public var to: JSON
    public var easing: Easing?
    public var duration: Double?
    public var delay: Double?
    public var bounds: Bounds?
    /// `keyframes` (with `offsets`, `easings`) instead of `from`/`to`; then `from` is the
    /// first keyframe (nil when it is null) and `to` the last.
    public var keyframes: TweenKeyframes? = nil
}

/// One `properties` entry of a physics, spring or decay node.
public struct DynamicProperty: Sendable {
    public var pointer: String
    public var path: PropertyPath
    public var from: JSON?
    /// The target (spring), the second wall (physics with collisions), or where to land (decay).
    public var to: JSON?
    /// Initial velocity for this property (units/s); overrides the node's.
    public var velocity: Double?
    public var bounds: Bounds?
    /// A spring's `keyframes` (successive targets) instead of `from`/`to`; then `from` is the
    /// first keyframe (nil when it is null) and `to` the last.
    public var keyframes: SpringKeyframes? = nil
}

/// `physics`: velocity with friction, optional walls (MotionMachine `PhysicsMotion`).
public struct PhysicsNode: Sendable {
    public var header: NodeHeader
    public var properties: [DynamicProperty]
    /// Units/s; the sign is the direction.
    public var velocity: Double
    /// 0 < f ≤ 1: the velocity is multiplied by 1 − f every second.
    public var friction: Double
    public var restitution: Double
    public var collisions: Bool
    public var restVelocity: Double
    public var additiveWeight: Double?
}

/// `spring` (b3ll `SpringAnimation`).
public struct SpringNode: Sendable {
    public var header: NodeHeader
    public var properties: [DynamicProperty]
    public var parameters: SpringParameters
    /// Initial velocity (units/s) for properties without their own.
    public var velocity: Double
    public var restDelta: Double
    public var restSpeed: Double
    /// Complete at the first crossing of the target.
    public var stopAtTarget: Bool
    /// Clips the output only.
    public var clamp: ClosedRange<Double>?
    public var additiveWeight: Double?
}

/// `decay` (b3ll `DecayAnimation`).
public struct DecayNode: Sendable {
    public var header: NodeHeader
    public var properties: [DynamicProperty]
    /// Units/s, for properties without `to`.
    public var velocity: Double?
    /// Per millisecond, in (0, 1).
    public var decayConstant: Double
    /// Resting points are rounded to multiples of this (0 disables).
    public var roundingFactor: Double
    public var restVelocity: Double
    public var additiveWeight: Double?
}

/// `path` and `pathPhysics`: motion along an SVG path (MotionMachine `PathMotion`,
/// `PathPhysicsMotion`).
public struct PathNode: Sendable {
    public enum EdgeBehavior: String, Sendable, CaseIterable {
        /// Positions are clamped to the path's ends (pathPhysics: walls at the start and end positions).
        case stopAtEdges
        /// The ends are joined: positions wrap around.
        case contiguousEdges
    }

    /// How the position moves along the path.
    public enum Drive: Sendable {
        /// `path`: from startPosition to endPosition over `duration` with an easing.
        case eased(duration: Double, easing: Easing, reverseEasing: Easing?)
        /// `pathPhysics`: the physics law on arc length.
        case physics(velocity: Double, friction: Double, restitution: Double, restVelocity: Double)
    }

    public var header: NodeHeader
    public var geometry: PathGeometry
    /// Receives the point `{x, y}`.
    public var output: PropertyPath
    /// Receives the tangent angle in degrees, if given.
    public var rotation: PropertyPath?
    /// Fractions of the length, 0…1.
    public var startPosition: Double
    public var endPosition: Double
    public var edgeBehavior: EdgeBehavior
    public var drive: Drive
}
