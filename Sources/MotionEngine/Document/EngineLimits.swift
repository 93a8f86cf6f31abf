/// Bounds on the work one document may ask for. Exceeding one is a 422 that names the limit.
public struct EngineLimits: Sendable, Equatable {
    /// Maximum frames × tracks in one response or stream.
    public var maxSamples: Int
    /// Maximum `fps`.
    public var maxFPS: Double
    /// Maximum groups and sequences nested inside one another (the outermost counted).
    public var maxDepth: Int
    /// Maximum events in one response or stream.
    public var maxEvents: Int
    /// Maximum `properties` entries summed over all nodes.
    public var maxProperties: Int
    /// Maximum bytes of one answer, estimated from the compiled timeline before anything is
    /// encoded (`OutputSize`): a whole `/v1/timelines` body, one stream frame with its
    /// events, or one session watcher read.
    public var maxResponseBytes: Int
    /// Maximum curve segments the compiler builds for one document, counted as it builds
    /// them (`TrackBuilder.charge`): in every play of a node, each element its paths,
    /// wildcards and stagger reach counts its keyframe segments (one without keyframes), a
    /// spring's `TrackBuilder.springSegmentWeight` each, and a physics body one more per
    /// bounce. Bounds the compiler's time and memory, which the samples do not: a 1 s window
    /// at 1 fps of a spring through 1,000 keyframes on 9,000 elements took 85 s and 1.9 GB.
    public var maxSegments: Int

    public init(maxSamples: Int = 2_000_000, maxFPS: Double = 1000, maxDepth: Int = 64,
                maxEvents: Int = 100_000, maxProperties: Int = 10_000, maxResponseBytes: Int = 64 << 20,
                maxSegments: Int = 1_000_000) {
        self.maxSamples = maxSamples
        self.maxFPS = maxFPS
        self.maxDepth = maxDepth
        self.maxEvents = maxEvents
        self.maxProperties = maxProperties
        self.maxResponseBytes = maxResponseBytes
        self.maxSegments = maxSegments
    }

    /// Entries of `target` the `*` paths of one document may walk together, matching or not
    /// (`PropertyPath.forEachExpansion`): `wildcardVisitsPerProperty` for each property
    /// `maxProperties` allows, 10,000,000 by default (about 0.2 s of walking, release build).
    public var wildcardVisits: Int {
        let (product, overflow) = maxProperties.multipliedReportingOverflow(by: Self.wildcardVisitsPerProperty)
        return overflow ? .max : max(product, Self.wildcardVisitsPerProperty)
    }

    public static let wildcardVisitsPerProperty = 1_000

    /// `total` plus `count` × `weight` segments, or nil when that would pass `limit` (or
    /// overflow): the one charge rule of the compiler (`TrackBuilder.charge`) and of the
    /// decoder's paths (`DocumentDecoder.chargePath`).
    static func segments(_ total: Int, charging count: Int, weight: Int, limit: Int) -> Int? {
        let (cost, multiplied) = count.multipliedReportingOverflow(by: weight)
        let (sum, added) = total.addingReportingOverflow(cost)
        return !multiplied && !added && sum <= limit ? sum : nil
    }

    public static let `default` = EngineLimits()
}
