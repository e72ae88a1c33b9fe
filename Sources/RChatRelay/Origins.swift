import RChatWire

import RChatNet

/// Where held frames came from, stored once and referred to by a 4-byte number: a link's
/// (rendezvous code, sender) or an invite token. Thousands of frames on one link share one
/// entry, so a held frame carries 4 bytes of origin instead of 64.
typealias Origins = NumberTable<DeliveryOrigin>

/// Who sent a held frame: the host it came from and the mailbox it authenticated as, each
/// budgeted (`maxHeldBytesPerHost`, `maxHeldBytesPerSender`). Nil when not known (a row
/// persisted before senders were kept).
struct HeldSender: Hashable {
    let host: HostAddress?
    let mailbox: MailboxID?
}

/// Values stored once and referred to by a 4-byte number (never 0), counted references.
final class NumberTable<Key: Hashable> {
    private struct Entry {
        let origin: Key
        var references: Int
    }

    private var entries: [UInt32: Entry] = [:]
    private var numbers: [Key: UInt32] = [:]
    private var next: UInt32 = 1

    var count: Int { entries.count }

    /// The number for `origin`, with one more reference to it.
    func retain(_ origin: Key) -> UInt32 {
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

    func origin(_ number: UInt32) -> Key? { entries[number]?.origin }
}

/// The held bytes each sending host and each sending mailbox has at the relay (one process;
/// a cluster holds in JetStream). Records carry a number of `senders`.
struct SenderShares {
    let senders = NumberTable<HeldSender>()
    private(set) var bytesByHost: [HostAddress: Int] = [:]
    private(set) var bytesByMailbox: [MailboxID: Int] = [:]

    /// Whether `bytes` more from `sender` stay within both budgets.
    func admits(_ bytes: Int, from sender: HeldSender, limits: RelayConfiguration) -> Bool {
        if let host = sender.host, bytesByHost[host, default: 0] + bytes > limits.heldBytesPerHost { return false }
        if let mailbox = sender.mailbox, bytesByMailbox[mailbox, default: 0] + bytes > limits.heldBytesPerSender { return false }
        return true
    }

    /// Counts a record of `bytes` from `sender`; returns the number the record carries.
    mutating func add(_ bytes: Int, from sender: HeldSender) -> UInt32 {
        if let host = sender.host { bytesByHost[host, default: 0] += bytes }
        if let mailbox = sender.mailbox { bytesByMailbox[mailbox, default: 0] += bytes }
        return senders.retain(sender)
    }

    /// The record of `bytes` carrying `number` is gone.
    mutating func remove(_ bytes: Int, number: UInt32) {
        guard let sender = senders.origin(number) else { return }
        senders.release(number)
        if let host = sender.host { bytesByHost[host] = bytesByHost[host, default: 0] - bytes > 0 ? bytesByHost[host]! - bytes : nil }
        if let mailbox = sender.mailbox {
            bytesByMailbox[mailbox] = bytesByMailbox[mailbox, default: 0] - bytes > 0 ? bytesByMailbox[mailbox]! - bytes : nil
        }
    }
}
