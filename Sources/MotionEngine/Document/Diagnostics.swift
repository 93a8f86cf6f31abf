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

/// The problems found in a document, reported at once: every one counted, the first
/// `DocumentError.listed` of them kept with their pointers and messages.
///
/// A document can hold a problem in every few bytes of its body: one 830 KB document had
/// 30,001, and listing them all made a 2.9 MB answer. Clients act on the first problems (a
/// 400 or 422 is fixed and sent again), so the answer lists the first hundred and says how
/// many there were.
public struct DocumentError: Error, Sendable, Equatable {
    /// How many problems an error keeps (and an answer lists).
    public static let listed = 100

    /// The first `listed` problems, in the order they were found.
    public private(set) var problems: [Problem]
    /// Every problem found, listed or not.
    public private(set) var count: Int
    /// Whether any problem, listed or not, is structurally wrong (`Problem.Kind.malformed`).
    public private(set) var isMalformed: Bool

    public init(_ problems: [Problem]) {
        self.problems = Array(problems.prefix(Self.listed))
        self.count = problems.count
        self.isMalformed = problems.contains { $0.kind == .malformed }
    }

    public init(_ diagnostics: Diagnostics) {
        problems = diagnostics.problems
        count = diagnostics.count
        isMalformed = diagnostics.isMalformed
    }

    /// 400 when anything is structurally wrong, else 422.
    public var status: Int { isMalformed ? 400 : 422 }

    /// Problems found but not listed.
    public var unlisted: Int { count - problems.count }
}

/// Collects problems while a document is decoded and compiled: counts every one, keeps the
/// first `DocumentError.listed`.
///
/// A reference type so that nested readers report into one list; it lives only for the
/// duration of one decode and is never shared between threads.
public final class Diagnostics {
    /// The first `DocumentError.listed` problems reported.
    public private(set) var problems: [Problem] = []
    /// Every problem reported: a reader that compares it before and after its work knows
    /// whether it found one, listed or not.
    public private(set) var count = 0
    /// Whether any problem reported is `Problem.Kind.malformed`.
    public private(set) var isMalformed = false

    public init() {}

    public var isEmpty: Bool { count == 0 }

    public func malformed(_ pointer: String, _ message: String) {
        add(Problem(pointer: pointer, message: message, kind: .malformed))
    }

    public func invalid(_ pointer: String, _ message: String) {
        add(Problem(pointer: pointer, message: message, kind: .invalid))
    }

    public func add(_ problem: Problem) {
        count += 1
        if problem.kind == .malformed { isMalformed = true }
        if problems.count < DocumentError.listed { problems.append(problem) }
    }

    /// Throws the collected problems, if any.
    public func check() throws(DocumentError) {
        if !isEmpty { throw DocumentError(self) }
    }
}
