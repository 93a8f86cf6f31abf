/// `output.format` (docs/exports.md): what `POST /v1/timelines` returns. Every format is written from
/// the same compiled `Timeline` by its own encoder (`TimelineExport.encoder(for:)`), which
/// also knows the format's content type.
public enum OutputFormat: String, Sendable, Equatable, CaseIterable {
    case json, csv, css, waapi, lottie, svg

}

/// `output.simplify` (docs/exports.md): reduce each track to few keyframes whose interpolation stays
/// within `tolerance` of the exact curve everywhere in the window (`KeyframeReducer`).
public struct SimplifyOptions: Sendable, Equatable {
    public enum Interpolation: String, Sendable, Equatable {
        /// Straight segments between keyframes.
        case linear
        /// Cubic Hermite segments with the keyframes' slopes.
        case cubic
    }

    /// ε > 0, in the track's own units (colour channels 0…1).
    public var tolerance: Double
    public var interpolation: Interpolation

    public init(tolerance: Double, interpolation: Interpolation = .linear) {
        self.tolerance = tolerance
        self.interpolation = interpolation
    }
}

/// `output.svg` (docs/exports.md): the plot's size in pixels. Nil fields take their defaults
/// (`SVGEncoder.defaultWidth`, and a height that gives every track a lane of its own).
public struct SVGOptions: Sendable, Equatable {
    public var width: Double?
    public var height: Double?

    public init(width: Double? = nil, height: Double? = nil) {
        self.width = width
        self.height = height
    }

    /// Bounds on `width` and `height`, pixels.
    public static let sizeRange: ClosedRange<Double> = 200...8192
}
