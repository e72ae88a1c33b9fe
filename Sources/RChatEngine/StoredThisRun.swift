import RChatStore

/// The incoming messages of one conversation that this run stored, in position order, so
/// that the Delivered receipts owed for them are known without reading the messages back
/// (that query was a tenth of a draining engine's time).
///
/// It answers only above a position under which it may be missing something: the position
/// before the first message it was given, or the last one it answered for. Below that, and
/// after `invalidate()` (a message stored some other way), the store answers.
struct StoredThisRun {
    private var items: [OwedDelivered] = []
    private var head = 0
    /// Every incoming message stored with a position above this is in `items[head...]`.
    private(set) var completeAbove: Int64?

    /// Past this many unanswered, it lets go of them (the store still has them).
    static let capacity = 100_000

    /// Messages just committed, in position order, after any given before.
    mutating func stored(_ batch: [OwedDelivered]) {
        guard let first = batch.first else { return }
        if let last = items.last, first.position <= last.position { return invalidate() }
        if completeAbove == nil { completeAbove = first.position - 1 }
        items.append(contentsOf: batch)
        if items.count - head > Self.capacity { invalidate() }
    }

    /// A message was stored without passing through `stored`: only the store knows now.
    mutating func invalidate() {
        items = []
        head = 0
        completeAbove = nil
    }

    /// The messages above `position`, at most `limit`, in order; nil when this cannot say.
    /// Those at or below `position` are let go: receipts never go back below it.
    mutating func owed(after position: Int64, limit: Int) -> [OwedDelivered]? {
        guard let complete = completeAbove, position >= complete else { return nil }
        while head < items.count && items[head].position <= position { head += 1 }
        completeAbove = position
        if head >= 4096 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return Array(items[head..<min(items.count, head + limit)])
    }
}
