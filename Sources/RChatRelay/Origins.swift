import RChatWire

/// Where held frames came from, stored once and referred to by a 4-byte number: a link's
/// (rendezvous code, sender) or an invite token. Thousands of frames on one link share one
/// entry, so a held frame carries 4 bytes of origin instead of 64.
final class Origins {
    private struct Entry {
        let origin: DeliveryOrigin
        var references: Int
    }

    private var entries: [UInt32: Entry] = [:]
    private var numbers: [DeliveryOrigin: UInt32] = [:]
    private var next: UInt32 = 1

    var count: Int { entries.count }

    /// The number for `origin`, with one more reference to it.
    func retain(_ origin: DeliveryOrigin) -> UInt32 {
        if let n = numbers[origin] {
            entries[n]!.references += 1
            return n
        }
        while entries[next] != nil || next == 0 { next &+= 1 }
        let n = next
        next &+= 1
        entries[n] = Entry(origin: origin, references: 1)
        numbers[origin] = n
        return n
    }

    func retain(number: UInt32) {
        entries[number]?.references += 1
    }

    func release(_ number: UInt32) {
        guard var entry = entries[number] else { return }
        entry.references -= 1
        if entry.references <= 0 {
            entries[number] = nil
            numbers[entry.origin] = nil
            // A dictionary keeps its largest size: after a burst of links, made anew.
            if entries.capacity > 4096, entries.count * 8 < entries.capacity {
                entries = entries.filter { _ in true }
                numbers = numbers.filter { _ in true }
            }
        } else {
            entries[number] = entry
        }
    }

    func origin(_ number: UInt32) -> DeliveryOrigin? { entries[number]?.origin }
}
