/// A status event of a motion node at an exact time (docs/documents.md, docs/timing-and-events.md).
public struct TimelineEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case started, reversed, repeated, stepped, collided, completed
    }

    public var time: Double
    public var kind: Kind
    /// The node's `id`, or its JSON pointer.
    public var motion: String
    /// For `stepped`: the index of the step that begins.
    public var step: Int?

    public init(time: Double, kind: Kind, motion: String, step: Int? = nil) {
        self.time = time
        self.kind = kind
        self.motion = motion
        self.step = step
    }
}
