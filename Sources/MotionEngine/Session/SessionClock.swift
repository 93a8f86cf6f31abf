/// The virtual clock of a live session (docs/streams-and-sessions.md): runs at wall time × `speed` from creation,
/// can be paused, resumed, reversed, sought and stopped, and completes at either end.
///
/// Pure value type: the caller passes wall time (seconds on a monotonic clock), so every
/// transition is testable without sleeping.
public struct SessionClock: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        case running, paused, reversing, stopped, completed
    }

    public enum Command: String, Sendable, CaseIterable {
        case pause, resume, stop, reverse, seek
    }

    /// A command the clock refuses in its current state (a 409).
    public struct Conflict: Error, Sendable, Equatable {
        public var state: State
        public var message: String

        public init(state: State, message: String) {
            self.state = state
            self.message = message
        }
    }

    /// The sampled interval: the clock runs from `start` and completes at `end` (or back at `start`).
    public let start: Double
    public private(set) var end: Double
    /// Virtual seconds per wall second (> 0).
    public let speed: Double

    /// Virtual time at `anchorWall`.
    private var anchorTime: Double
    private var anchorWall: Double
    /// +1 forward, −1 reversing; kept while paused so `resume` continues the same way.
    public private(set) var direction: Double = 1
    public private(set) var isPaused = false
    private var terminal: State?

    public init(start: Double, end: Double, speed: Double, wall: Double) {
        self.start = start
        self.end = max(start, end)
        self.speed = speed
        anchorTime = start
        anchorWall = wall
        if self.end <= start { terminal = .completed }
    }

    /// The clock's time at `wall`, clamped to the interval.
    public func time(atWall wall: Double) -> Double {
        if terminal != nil || isPaused { return anchorTime }
        let t = anchorTime + direction * speed * (wall - anchorWall)
        return min(end, max(start, t))
    }

    /// The state at `wall` (a running clock that has reached an end is `completed`).
    public func state(atWall wall: Double) -> State {
        if let terminal { return terminal }
        if isPaused { return .paused }
        if completionWall.map({ wall >= $0 }) ?? false { return .completed }
        return direction > 0 ? .running : .reversing
    }

    /// Wall time at which the running clock reaches its end (or `start` while reversing).
    public var completionWall: Double? {
        guard terminal == nil, !isPaused else { return nil }
        let remaining = direction > 0 ? end - anchorTime : anchorTime - start
        return anchorWall + remaining / speed
    }

    /// Wall time at which the clock shows virtual time `t` next, or nil if it never will.
    public func wall(atTime t: Double) -> Double? {
        guard terminal == nil, !isPaused else { return nil }
        let delta = (t - anchorTime) * direction
        guard delta >= 0 else { return nil }
        return anchorWall + delta / speed
    }

    /// Moves the end later (a retarget whose spring rests after it); the state is unchanged.
    public mutating func extend(to newEnd: Double) {
        end = max(end, newEnd)
    }

    /// Settles a completion that has happened by `wall` into the terminal state.
    public mutating func settle(atWall wall: Double) {
        if terminal == nil, !isPaused, let completion = completionWall, wall >= completion {
            anchorTime = direction > 0 ? end : start
            anchorWall = completion
            terminal = .completed
        }
    }

    /// Applies a command at `wall`. Pausing a paused clock or resuming a running one is a
    /// no-op; `reverse` and `seek` keep a paused clock paused; anything on a stopped or
    /// completed clock is a conflict.
    public mutating func apply(_ command: Command, time: Double? = nil, atWall wall: Double) throws(Conflict) {
        settle(atWall: wall)
        if let terminal {
            throw Conflict(state: terminal, message: "the session is \(terminal.rawValue); it takes no more commands")
        }
        let now = self.time(atWall: wall)
        anchorTime = now
        anchorWall = wall
        switch command {
        case .pause:
            isPaused = true
        case .resume:
            isPaused = false
        case .reverse:
            direction = -direction
        case .seek:
            anchorTime = min(end, max(start, time ?? now))
        case .stop:
            terminal = .stopped
        }
        settle(atWall: wall)
    }
}
