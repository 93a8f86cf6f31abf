/// One problem found in a request document, located by a JSON pointer.
public struct Problem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Structurally wrong: malformed JSON, missing field, wrong JSON type, unknown field (400).
        case malformed
        /// Well-formed but meaningless: out of range, unknown name, over a limit (422).
        case invalid
    }

    public var pointer: String
    public var message: String
    public var kind: Kind

    public init(pointer: String, message: String, kind: Kind) {
        self.pointer = pointer
        self.message = message
        self.kind = kind
    }

    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(message)" }
}

/// Every problem found in a document, reported at once.
public struct DocumentError: Error, Sendable, Equatable {
    public var problems: [Problem]

    public init(_ problems: [Problem]) { self.problems = problems }

    /// 400 when anything is structurally wrong, else 422.
    public var status: Int { problems.contains { $0.kind == .malformed } ? 400 : 422 }
}

/// Collects problems while a document is decoded and compiled.
///
/// A reference type so that nested readers report into one list; it lives only for the
/// duration of one decode and is never shared between threads.
public final class Diagnostics {
    public private(set) var problems: [Problem] = []

    public init() {}

    public var isEmpty: Bool { problems.isEmpty }

    public func malformed(_ pointer: String, _ message: String) {
        problems.append(Problem(pointer: pointer, message: message, kind: .malformed))
    }

    public func invalid(_ pointer: String, _ message: String) {
        problems.append(Problem(pointer: pointer, message: message, kind: .invalid))
    }

    public func add(_ problem: Problem) { problems.append(problem) }

    /// Throws the collected problems, if any.
    public func check() throws(DocumentError) {
        if !problems.isEmpty { throw DocumentError(problems) }
    }
}
