/// `stagger` (docs/authoring.md): start offsets spread over the elements of a property list or the
/// children of a group or timeline.
public struct Stagger: Sendable, Equatable {
    public enum Spread: Sendable, Equatable {
        /// Seconds between neighbours.
        case each(Double)
        /// The whole spread, seconds.
        case amount(Double)
    }

    public enum Origin: Sendable, Equatable {
        case first, last, center, edges, random
        case index(Int)
    }

    public enum Axis: String, Sendable, Equatable { case x, y }

    public var spread: Spread
    public var origin: Origin = .first
    /// `[rows, columns]`; elements fill it in row order.
    public var grid: (rows: Int, columns: Int)?
    public var axis: Axis?
    public var easing: Easing?
    public var seed: UInt64 = 0

    public static func == (lhs: Stagger, rhs: Stagger) -> Bool {
        lhs.spread == rhs.spread && lhs.origin == rhs.origin && lhs.grid?.rows == rhs.grid?.rows
            && lhs.grid?.columns == rhs.grid?.columns && lhs.axis == rhs.axis && lhs.easing == rhs.easing && lhs.seed == rhs.seed
    }

    /// Largest grid side: bounds the arithmetic, not memory (only elements are allocated).
    static let maxGridSide = 1_000_000

    static func decode(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> Stagger? {
        defer { reader.finish() }
        let each = reader.time("each")
        let amount = reader.time("amount")
        var spread: Spread?
        switch (each, amount) {
        case (let each?, nil): spread = .each(each)
        case (nil, let amount?): spread = .amount(amount)
        case (.some, .some): diagnostics.invalid(reader.pointer("amount"), "give 'each' or 'amount', not both")
        case (nil, nil):
            if !reader.has("each") && !reader.has("amount") {
                diagnostics.malformed(reader.pointer("each"), "is required: give 'each' (seconds between neighbours) or 'amount' (the whole spread)")
            }
        }
        var origin = Origin.first
        if let value = reader.value("from") {
            switch value {
            case .string("first"): origin = .first
            case .string("last"): origin = .last
            case .string("center"): origin = .center
            case .string("edges"): origin = .edges
            case .string("random"): origin = .random
            case .number(let n) where n == n.rounded() && n >= 0 && n < 1e9: origin = .index(Int(n))
            case .number:
                diagnostics.invalid(reader.pointer("from"), "an index must be an integer ≥ 0")
            default:
                diagnostics.invalid(reader.pointer("from"), "must be 'first', 'last', 'center', 'edges', 'random' or an element index")
            }
        }
        var grid: (rows: Int, columns: Int)?
        if let items = reader.array("grid") {
            let sides = items.compactMap(\.numberValue).filter { $0 == $0.rounded() && $0 >= 1 && $0 <= Double(maxGridSide) }
            if items.count == 2, sides.count == 2 {
                grid = (Int(sides[0]), Int(sides[1]))
            } else {
                diagnostics.invalid(reader.pointer("grid"), "must be [rows, columns], two integers from 1 to \(maxGridSide)")
            }
        }
        var axis: Axis?
        if let text = reader.string("axis") {
            if let value = Axis(rawValue: text) { axis = value } else {
                diagnostics.invalid(reader.pointer("axis"), "must be 'x' or 'y'")
            }
            if !reader.has("grid") { diagnostics.invalid(reader.pointer("axis"), "applies only with 'grid'") }
        }
        let easing = reader.value("easing").flatMap { Easing.decode($0, at: reader.pointer("easing"), diagnostics) }
        var seed: UInt64 = 0
        if let value = reader.number("seed") {
            if value == value.rounded() && value >= 0 && value <= 9_007_199_254_740_992 {
                seed = UInt64(value)
            } else {
                diagnostics.invalid(reader.pointer("seed"), "must be an integer from 0 to 2^53")
            }
        }
        guard let spread else { return nil }
        return Stagger(spread: spread, origin: origin, grid: grid, axis: axis, easing: easing, seed: seed)
    }

    /// Each element's distance from the origin (docs/authoring.md); nil (reported) when the origin
    /// index or the grid does not fit `count` elements.
    func distances(count n: Int, at pointer: String, _ diagnostics: Diagnostics) -> [Double]? {
        if case .index(let j) = origin, j >= n {
            diagnostics.invalid(pointer + "/from", "index \(j) is beyond the \(n) staggered elements")
            return nil
        }
        guard n > 0 else { return [] }
        if let grid {
            let (cells, overflow) = grid.rows.multipliedReportingOverflow(by: grid.columns)
            if !overflow, cells < n {
                diagnostics.invalid(pointer + "/grid", "\(grid.rows)×\(grid.columns) cells cannot hold the \(n) staggered elements")
                return nil
            }
            let columns = grid.columns
            func cell(_ i: Int) -> (row: Double, column: Double) { (Double(i / columns), Double(i % columns)) }
            func distance(_ i: Int, _ origin: (row: Double, column: Double)) -> Double {
                let (r, c) = cell(i)
                let dy = r - origin.row, dx = c - origin.column
                switch axis {
                case .x?: return abs(dx)
                case .y?: return abs(dy)
                case nil: return (dx * dx + dy * dy).squareRoot()
                }
            }
            let centre = (row: Double(grid.rows - 1) / 2, column: Double(grid.columns - 1) / 2)
            switch origin {
            case .first, .random: return (0..<n).map { distance($0, (0, 0)) }
            case .last: return (0..<n).map { distance($0, cell(n - 1)) }
            case .index(let j): return (0..<n).map { distance($0, cell(j)) }
            case .center: return (0..<n).map { distance($0, centre) }
            case .edges:
                let fromCentre = (0..<n).map { distance($0, centre) }
                let largest = fromCentre.max() ?? 0
                return fromCentre.map { largest - $0 }
            }
        }
        let last = Double(n - 1)
        switch origin {
        case .first, .random: return (0..<n).map { Double($0) }
        case .last: return (0..<n).map { last - Double($0) }
        case .center: return (0..<n).map { abs(Double($0) - last / 2) }
        case .edges: return (0..<n).map { min(Double($0), last - Double($0)) }
        case .index(let j): return (0..<n).map { abs(Double($0 - j)) }
        }
    }

    /// The start offset of each of `count` elements, seconds; nil (reported) when the
    /// stagger does not fit them or its spread is over the time limit.
    public func offsets(count n: Int, at pointer: String, _ diagnostics: Diagnostics) -> [Double]? {
        guard let distances = distances(count: n, at: pointer, diagnostics) else { return nil }
        let largest = distances.max() ?? 0
        let spreadSeconds: Double
        switch spread {
        case .each(let each): spreadSeconds = each * largest
        case .amount(let amount): spreadSeconds = amount
        }
        guard spreadSeconds <= ObjectReader.maximumTime else {
            diagnostics.invalid(pointer, "the stagger spreads the starts over \(format(spreadSeconds)) s, more than 1e9 s")
            return nil
        }
        var offsets = distances.map { d -> Double in
            guard largest > 0 else { return 0 }
            if let easing { return spreadSeconds * easing(d / largest) }
            switch spread {
            case .each(let each): return each * d
            case .amount(let amount): return amount * d / largest
            }
        }
        // An easing may overshoot past 1 as well (a cubic-bezier's y up to ±1e6): the latest
        // start, not only the spread, must be within the time limit.
        if easing != nil, let latest = offsets.max(), !(latest <= ObjectReader.maximumTime) {
            diagnostics.invalid(pointer, "the stagger's easing puts the latest start at \(format(latest)) s, more than 1e9 s")
            return nil
        }
        if origin == .random {
            let permutation = SplitMix64.permutation(count: n, seed: seed)
            offsets = permutation.map { offsets[$0] }
        }
        // An easing may overshoot below 0 (back, elastic): a start never moves earlier.
        return offsets.map { max(0, $0) }
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny generator with a fixed, portable output
/// sequence, so `random` staggers are the same on every run and machine (the system RNG is
/// neither seedable nor stable across platforms).
public struct SplitMix64: Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in 0..<bound (Lemire's multiply-and-reject, unbiased).
    public mutating func below(_ bound: UInt64) -> UInt64 {
        precondition(bound > 0)
        let threshold = (0 &- bound) % bound
        while true {
            let product = next().multipliedFullWidth(by: bound)
            if product.low >= threshold { return product.high }
        }
    }

    /// A Fisher–Yates shuffle of 0..<count driven by SplitMix64(seed).
    public static func permutation(count: Int, seed: UInt64) -> [Int] {
        var items = Array(0..<count)
        var generator = SplitMix64(seed: seed)
        var i = count - 1
        while i > 0 {
            let j = Int(generator.below(UInt64(i + 1)))
            items.swapAt(i, j)
            i -= 1
        }
        return items
    }
}
