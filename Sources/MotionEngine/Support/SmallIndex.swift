/// Where each key sits in an array that only grows and holds each key once (the element at
/// position i has key `keyAt(i)`): the array itself is searched while it is short, and a
/// hash table is built only once it holds more than `linearLimit` elements.
///
/// A document usually animates a handful of properties, and for those a `Dictionary` costs
/// more than it saves: its first insertions grow the table through code that is not
/// specialised here and looks its storage's metadata up at run time, about 1,100
/// instructions an insertion, and so does a separate array of keys (callgrind, the small
/// document of `make bench-instructions`: TrackBuilder's two indexes, 200,547 → 198,198
/// instructions a request). Past the limit it is a dictionary, so a document with thousands
/// of properties still finds each in constant time.
struct SmallIndex<Key: Hashable> {
    static var linearLimit: Int { 16 }

    private var table: [Key: Int]?

    /// `expected`: about how many elements the array will hold; past the limit the table is
    /// made now, with room for them.
    init(expected: Int = 0) {
        if expected > Self.linearLimit { table = Dictionary(minimumCapacity: expected) }
    }

    /// The position of `key` among the array's `count` elements, or nil.
    @inline(__always)
    func position(of key: Key, count: Int, keyAt: (Int) -> Key) -> Int? {
        if let table { return table[key] }
        for index in 0..<count where keyAt(index) == key { return index }
        return nil
    }

    /// Makes room for `additional` more keys beyond the array's `count` elements, so that
    /// adding them does not grow the table step by step (a property of 200,000 leaves: its
    /// table grew 15 times, 3.5 % of the request's time).
    mutating func reserve(_ additional: Int, count: Int, keyAt: (Int) -> Key) {
        let total = count + additional
        if let capacity = table?.capacity {
            // At least doubled, as growth would: many small reservations must not each
            // copy the table.
            if total > capacity { table!.reserveCapacity(Swift.max(total, 2 * capacity)) }
        } else if total > Self.linearLimit {
            var table = [Key: Int](minimumCapacity: total)
            for index in 0..<count { table[keyAt(index)] = index }
            self.table = table
        }
    }

    /// Records that the array's last element (of `count`) has `key`, which it held nowhere else.
    mutating func appended(_ key: Key, count: Int, keyAt: (Int) -> Key) {
        if table != nil {
            table![key] = count - 1
        } else if count > Self.linearLimit {
            var table = [Key: Int](minimumCapacity: 2 * count)
            for index in 0..<count { table[keyAt(index)] = index }
            self.table = table
        }
    }
}
