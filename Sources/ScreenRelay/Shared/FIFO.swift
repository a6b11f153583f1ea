/// A first-in first-out queue whose storage is as large as the most it has held at once: items are taken
/// from a moving head, and the taken part is reclaimed once it is half of the storage.
struct FIFO<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var first: Element? { head < storage.count ? storage[head] : nil }
    var count: Int { storage.count - head }
    /// Slots the storage has room for (what memory it holds).
    var storageCapacity: Int { storage.capacity }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        defer {
            storage[head] = nil
            head += 1
            if head == storage.count {
                storage.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 32 && head * 2 >= storage.count {
                storage.removeFirst(head)
                head = 0
            }
        }
        return storage[head]
    }

    /// Removes the items `shouldRemove` picks, keeping the others in order.
    mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        var kept: [Element?] = []
        kept.reserveCapacity(count)
        for index in head..<storage.count {
            if let element = storage[index], !shouldRemove(element) { kept.append(element) }
        }
        storage = kept
        head = 0
    }

    mutating func removeAll() {
        storage.removeAll()
        head = 0
    }
}
