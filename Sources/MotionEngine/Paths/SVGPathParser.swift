/// Why SVG path data could not be read.
///
/// `offset` counts characters from 0 (path data is ASCII, so it is also the byte offset up to
/// the first non-ASCII character, which is itself an error). `message` says what was expected
/// without the offset; `description` adds it.
public struct PathSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(message) at offset \(offset)" }
}

/// A parser for SVG 2 path data (`d`), reducing it to absolute `PathElement`s.
///
/// Grammar (SVG 2 §9.3.9): every command `M L H V C S Q T A Z` in absolute and relative form;
/// a command letter may be followed by several argument sets (extra pairs after `M`/`m` are
/// `L`/`l`); numbers are `[+-]? (digits ("." digits?)? | "." digits) ([eE] [+-]? digits)?`
/// and need no separator where the next one starts with a sign or a second `.`; between
/// numbers at most one comma, with any whitespace; arc flags are single `0`/`1` characters
/// that need no separator. Unlike a renderer it does not keep the part before an error: any
/// error rejects the whole string.
///
/// `H`/`V` become lines, `S`/`T` curves whose first control point is the previous `C`/`S`
/// (resp. `Q`/`T`) control point reflected through the current point, else the current point;
/// arcs become cubic Béziers (see `EllipticalArc`), or a line when a radius is 0, or nothing
/// when the end point equals the current point.
public struct SVGPathParser: Sendable {
    /// The elements, and for each the character offset of the command it came from.
    struct Output {
        var elements: [PathElement] = []
        var offsets: [Int] = []
    }

    /// Parses `text`; more than `maxSegments` elements (an arc counts once per Bézier piece)
    /// is an error, so that the work a string can ask for is bounded.
    public static func parse(_ text: String, maxSegments: Int = PathGeometry.defaultMaxSegments) throws(PathSyntaxError) -> [PathElement] {
        try parseWithOffsets(text, maxSegments: maxSegments).elements
    }

    static func parseWithOffsets(_ text: String, maxSegments: Int) throws(PathSyntaxError) -> Output {
        var parser = Parser(bytes: Array(text.utf8), maxSegments: maxSegments)
        try parser.parse()
        return parser.output
    }
}

private struct Parser {
    let bytes: [UInt8]
    let maxSegments: Int
    var i = 0
    var output = SVGPathParser.Output()

    var current = PathPoint(0, 0)
    var subpathStart = PathPoint(0, 0)
    /// Second control point of the last C/S, or control point of the last Q/T, for reflection.
    var lastCubicControl: PathPoint?
    var lastQuadControl: PathPoint?
    /// Start of the command (or implicit repeat) being parsed, for offsets.
    var commandOffset = 0

    init(bytes: [UInt8], maxSegments: Int) {
        self.bytes = bytes
        self.maxSegments = maxSegments
    }

    // MARK: - Characters

    static func isWhitespace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D }
    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    var atEnd: Bool { i >= bytes.count }

    mutating func skipWhitespace() {
        while i < bytes.count && Parser.isWhitespace(bytes[i]) { i += 1 }
    }

    /// Whether a number starts at `i` (a sign, a digit or a `.`).
    var atNumberStart: Bool {
        guard i < bytes.count else { return false }
        let c = bytes[i]
        return Parser.isDigit(c) || c == 0x2B || c == 0x2D || c == 0x2E
    }

    /// `comma_wsp?` between two numbers of one command.
    mutating func skipSeparator() {
        skipWhitespace()
        if i < bytes.count && bytes[i] == 0x2C {
            i += 1
            skipWhitespace()
        }
    }

    /// A quoted description of the character at `i` for messages.
    var found: String {
        guard i < bytes.count else { return "the end of the path data" }
        let c = bytes[i]
        if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        if c < 0x80 { return "character \(c)" }
        return "a non-ASCII character"
    }

    func error(_ message: String, at offset: Int? = nil) -> PathSyntaxError {
        PathSyntaxError(offset: offset ?? i, message: message)
    }

    // MARK: - Tokens

    /// A number per the SVG grammar; `what` names it in the error.
    mutating func number(_ what: String, after command: UInt8) throws(PathSyntaxError) -> Double {
        let start = i
        var j = i
        if j < bytes.count && (bytes[j] == 0x2B || bytes[j] == 0x2D) { j += 1 }
        var digits = 0
        while j < bytes.count && Parser.isDigit(bytes[j]) { j += 1; digits += 1 }
        if j < bytes.count && bytes[j] == 0x2E {
            // As in browsers, a '.' must be followed by a digit ("1." is an error).
            j += 1
            guard j < bytes.count && Parser.isDigit(bytes[j]) else {
                i = j
                throw error("expected a digit after '.' in a number (\(what) of '\(Character(Unicode.Scalar(command)))'), found \(found)")
            }
            while j < bytes.count && Parser.isDigit(bytes[j]) { j += 1; digits += 1 }
        }
        guard digits > 0 else {
            i = j
            throw error("expected a number (\(what) of '\(Character(Unicode.Scalar(command)))'), found \(found)")
        }
        if j < bytes.count && (bytes[j] == 0x65 || bytes[j] == 0x45) {  // e E
            var k = j + 1
            if k < bytes.count && (bytes[k] == 0x2B || bytes[k] == 0x2D) { k += 1 }
            if k < bytes.count && Parser.isDigit(bytes[k]) {
                while k < bytes.count && Parser.isDigit(bytes[k]) { k += 1 }
                j = k
            }
        }
        i = j
        let token = String(decoding: bytes[start..<j], as: UTF8.self)
        guard let value = Double(token), value.isFinite else {
            throw error("number '\(token)' is out of range", at: start)
        }
        guard abs(value) <= Self.maximumMagnitude else {
            throw error("number '\(token)' is outside ±1e15", at: start)
        }
        return value
    }

    mutating func flag(_ what: String) throws(PathSyntaxError) -> Bool {
        guard i < bytes.count, bytes[i] == 0x30 || bytes[i] == 0x31 else {
            throw error("expected an arc flag, '0' or '1' (\(what) of 'A'), found \(found)")
        }
        i += 1
        return bytes[i - 1] == 0x31
    }

    /// Numbers and the absolute coordinates they lead to are within ±1e15, like every other
    /// number in a document (so arc and length arithmetic stays finite).
    static let maximumMagnitude = ObjectReader.maximumMagnitude

    mutating func coordinate(_ what: String, after command: UInt8, relative: Bool, origin: Double) throws(PathSyntaxError) -> Double {
        let start = i
        let value = try number(what, after: command)
        guard relative else { return value }
        let absolute = origin + value
        guard abs(absolute) <= Self.maximumMagnitude else {
            throw error("the relative \(what) of '\(Character(Unicode.Scalar(command)))' leads to \(format(absolute)), outside ±1e15", at: start)
        }
        return absolute
    }

    mutating func pair(_ what: String, after command: UInt8, relative: Bool) throws(PathSyntaxError) -> PathPoint {
        let x = try coordinate("x of \(what)", after: command, relative: relative, origin: current.x)
        skipSeparator()
        let y = try coordinate("y of \(what)", after: command, relative: relative, origin: current.y)
        return PathPoint(x, y)
    }

    // MARK: - Output

    mutating func emit(_ element: PathElement) throws(PathSyntaxError) {
        try reserve(1)
        output.elements.append(element)
        output.offsets.append(commandOffset)
    }

    /// Fails when `count` more elements would exceed the limit.
    func reserve(_ count: Int) throws(PathSyntaxError) {
        if output.elements.count + count > maxSegments {
            throw error("path data has more than \(maxSegments) segments (an arc counts once per Bézier piece)", at: commandOffset)
        }
    }

    // MARK: - Grammar

    mutating func parse() throws(PathSyntaxError) {
        skipWhitespace()
        if atEnd {
            throw error("path data is empty; expected a moveto ('M' or 'm')")
        }
        if bytes[i] != 0x4D && bytes[i] != 0x6D {
            throw error("path data must begin with a moveto ('M' or 'm'), found \(found)")
        }
        while true {
            skipWhitespace()
            if atEnd { return }
            let command = bytes[i]
            commandOffset = i
            guard Parser.commandLetters.contains(command) else {
                if atNumberStart {
                    throw error("expected a command letter, found \(found) (the previous command takes no more numbers here)")
                }
                throw error("expected a command letter (M, L, H, V, C, S, Q, T, A or Z, or lower case), found \(found)")
            }
            i += 1
            try parseCommand(command)
        }
    }

    static let commandLetters: Set<UInt8> = Set("MmLlHhVvCcSsQqTtAaZz".utf8)

    /// One command letter with all its argument sets.
    mutating func parseCommand(_ letter: UInt8) throws(PathSyntaxError) {
        let upper = letter & ~0x20
        let relative = letter != upper
        if upper == 0x5A {  // Z
            try emit(.close)
            current = subpathStart
            lastCubicControl = nil
            lastQuadControl = nil
            return
        }
        skipWhitespace()
        var first = true
        repeat {
            if !first { commandOffset = i }
            try arguments(upper, letter, relative: relative, first: first)
            first = false
            // Another argument set follows after an optional comma_wsp.
            skipWhitespace()
            if i < bytes.count && bytes[i] == 0x2C {
                i += 1
                skipWhitespace()
                if !atNumberStart {
                    throw error("expected a number after ',' (another argument set of '\(Character(Unicode.Scalar(letter)))'), found \(found)")
                }
            }
        } while atNumberStart
    }

    /// One argument set of a command (`upper` is the upper-case letter).
    mutating func arguments(_ upper: UInt8, _ letter: UInt8, relative: Bool, first: Bool) throws(PathSyntaxError) {
        switch upper {
        case 0x4D:  // M
            if first {
                let point = try pair("the moveto point", after: letter, relative: relative)
                try emit(.move(to: point))
                current = point
                subpathStart = point
            } else {
                // Extra pairs after a moveto are implicit linetos.
                let point = try pair("an implicit lineto point", after: letter, relative: relative)
                try emit(.line(to: point))
                current = point
            }
            lastCubicControl = nil
            lastQuadControl = nil
        case 0x4C:  // L
            let point = try pair("the lineto point", after: letter, relative: relative)
            try emit(.line(to: point))
            current = point
            lastCubicControl = nil
            lastQuadControl = nil
        case 0x48:  // H
            let x = try coordinate("x", after: letter, relative: relative, origin: current.x)
            let point = PathPoint(x, current.y)
            try emit(.line(to: point))
            current = point
            lastCubicControl = nil
            lastQuadControl = nil
        case 0x56:  // V
            let y = try coordinate("y", after: letter, relative: relative, origin: current.y)
            let point = PathPoint(current.x, y)
            try emit(.line(to: point))
            current = point
            lastCubicControl = nil
            lastQuadControl = nil
        case 0x43:  // C
            let c1 = try pair("the first control point", after: letter, relative: relative)
            skipSeparator()
            let c2 = try pair("the second control point", after: letter, relative: relative)
            skipSeparator()
            let point = try pair("the end point", after: letter, relative: relative)
            try emit(.cubic(control1: c1, control2: c2, to: point))
            current = point
            lastCubicControl = c2
            lastQuadControl = nil
        case 0x53:  // S
            let c2 = try pair("the second control point", after: letter, relative: relative)
            skipSeparator()
            let point = try pair("the end point", after: letter, relative: relative)
            let c1 = lastCubicControl.map { PathPoint(2 * current.x - $0.x, 2 * current.y - $0.y) } ?? current
            try emit(.cubic(control1: c1, control2: c2, to: point))
            current = point
            lastCubicControl = c2
            lastQuadControl = nil
        case 0x51:  // Q
            let c = try pair("the control point", after: letter, relative: relative)
            skipSeparator()
            let point = try pair("the end point", after: letter, relative: relative)
            try emit(.quad(control: c, to: point))
            current = point
            lastCubicControl = nil
            lastQuadControl = c
        case 0x54:  // T
            let point = try pair("the end point", after: letter, relative: relative)
            let c = lastQuadControl.map { PathPoint(2 * current.x - $0.x, 2 * current.y - $0.y) } ?? current
            try emit(.quad(control: c, to: point))
            current = point
            lastCubicControl = nil
            lastQuadControl = c
        default:  // A
            let rx = try number("rx", after: letter)
            skipSeparator()
            let ry = try number("ry", after: letter)
            skipSeparator()
            let rotation = try number("x-axis-rotation", after: letter)
            skipSeparator()
            let large = try flag("large-arc-flag")
            skipSeparator()
            let sweep = try flag("sweep-flag")
            skipSeparator()
            let point = try pair("the end point", after: letter, relative: relative)
            try arc(rx: rx, ry: ry, rotation: rotation, large: large, sweep: sweep, to: point)
            current = point
            lastCubicControl = nil
            lastQuadControl = nil
        }
    }

    mutating func arc(rx: Double, ry: Double, rotation: Double, large: Bool, sweep: Bool, to point: PathPoint) throws(PathSyntaxError) {
        switch EllipticalArc.make(from: current, rx: rx, ry: ry, rotationDegrees: rotation,
                                  largeArc: large, sweep: sweep, to: point) {
        case .omitted:
            return
        case .line:
            try emit(.line(to: point))
        case .tooLarge(let radius):
            throw error("the arc's radii are too small to reach its end point and would have to be scaled up to a radius of \(radius.isFinite ? format(radius.rounded()) : "infinity"), over 1e16 (a radius far smaller than the other)", at: commandOffset)
        case .arc(let arc):
            let pieces = arc.pieceCount
            try reserve(pieces)
            for index in 0..<pieces {
                try emit(arc.piece(index, of: pieces))
            }
        }
    }
}
