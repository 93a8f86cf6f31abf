/// A binary min-heap: `push` and `pop` in O(log n), `first` in O(1).
public struct MinHeap<Element> {
    private var items: [Element] = []
    private let precedes: (Element, Element) -> Bool

    /// `precedes(a, b)`: a comes out before b.
    public init(by precedes: @escaping (Element, Element) -> Bool) {
        self.precedes = precedes
    }

    public var isEmpty: Bool { items.isEmpty }
    public var count: Int { items.count }
    /// The element `pop` would return.
    public var first: Element? { items.first }

    public mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    public mutating func pop() -> Element? {
        guard !items.isEmpty else { return nil }
        let top = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var best = parent
                if left < items.count, precedes(items[left], items[best]) { best = left }
                if right < items.count, precedes(items[right], items[best]) { best = right }
                if best == parent { break }
                items.swapAt(parent, best)
                parent = best
            }
        }
        return top
    }

    public mutating func removeAll() { items.removeAll() }

    /// Drops every element for which `shouldRemove` is true, keeping the heap order
    /// (O(n log n)).
    public mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        let kept = items.filter { !shouldRemove($0) }
        guard kept.count != items.count else { return }
        items.removeAll(keepingCapacity: true)
        for element in kept { push(element) }
    }
}
