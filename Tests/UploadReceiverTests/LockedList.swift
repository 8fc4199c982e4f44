import Synchronization

/// A list that receiver threads (observers, scripts, concurrent clients) append to and the test
/// reads afterwards.
final class LockedList<Element: Sendable>: Sendable {
    private let stored = Mutex<[Element]>([])

    func append(_ element: Element) { stored.withLock { $0.append(element) } }

    var values: [Element] { stored.withLock { $0 } }
}
