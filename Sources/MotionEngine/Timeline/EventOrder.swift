/// The order of a timeline's events (docs/timing-and-events.md): by time; at one instant an event comes
/// after the event that caused it (a child's `completed` before the parent's `stepped` it
/// triggers, a parent's `started` before its children's), and events with no causal link
/// between them come in the pre-order position of their nodes in the document.
enum EventOrder {
    /// Sorts `events` (in generation order, with each one's node `orders` and the index of its
    /// same-instant `causes`, −1 for none). O(n log n).
    static func sorted(_ events: [TimelineEvent], orders: [Int], causes: [Int]) -> [TimelineEvent] {
        precondition(events.count == orders.count && events.count == causes.count)
        let byTime = events.indices.sorted { (events[$0].time, $0) < (events[$1].time, $1) }
        var result: [TimelineEvent] = []
        result.reserveCapacity(events.count)
        var groupStart = 0
        while groupStart < byTime.count {
            // One instant: times within timeEpsilon of its first event.
            let instant = events[byTime[groupStart]].time
            var groupEnd = groupStart + 1
            while groupEnd < byTime.count, events[byTime[groupEnd]].time - instant < timeEpsilon { groupEnd += 1 }
            let group = byTime[groupStart..<groupEnd]
            if group.count == 1 {
                result.append(events[group.first!])
            } else {
                var members = Set<Int>()
                members.reserveCapacity(group.count)
                for index in group { members.insert(index) }
                // Effects of each cause; events whose cause is not at this instant are roots.
                var effects: [Int: [Int]] = [:]
                var ready = MinHeap<Int> { (orders[$0], $0) < (orders[$1], $1) }
                for index in group {
                    let cause = causes[index]
                    if cause >= 0, members.contains(cause) { effects[cause, default: []].append(index) } else { ready.push(index) }
                }
                while let next = ready.pop() {
                    result.append(events[next])
                    for effect in effects[next] ?? [] { ready.push(effect) }
                }
            }
            groupStart = groupEnd
        }
        return result
    }
}
