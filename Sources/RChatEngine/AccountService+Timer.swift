import Foundation
import RChatCore
import RChatStore
#if canImport(Glibc)
import Glibc
#endif

/// Disappearing messages (docs/ARCHITECTURE.md, "Disappearing messages").
extension AccountService {
    /// `rchat timer NAME 1h`, `/timer`: sets the conversation's timer on both sides. Applied
    /// here at once, and sent as a control item with its own id and status; both sides show
    /// a row. Its counter is one more than every one seen (`TimerPolicy.next`), so it takes
    /// effect here whatever the clocks say, and on the other side once delivered unless a
    /// change made there meanwhile comes after it (both sides end on the same one). Nothing
    /// is written or reported when it could not take effect. Returns that item's id.
    public func setTimer(_ timer: DisappearingTimer, for contact: Contact) throws(EngineError) -> MessageID {
        guard contact.state != .request else {
            throw .usage("\(contact.name) is a message request: add their code to accept it first")
        }
        let id = MessageID.fresh(clock)
        let t = clock.now()
        try Self.wrap {
            try store.transaction { tx in
                guard let counter = TimerPolicy.next(after: try tx.conversationTimer(contact: contact.id).setBy) else {
                    throw EngineError.refused("the timer with \(contact.name) cannot be changed any more: their rChat sent the last change there can be")
                }
                let row = try tx.insertOutgoing(contact: contact.id, id: id, content: .control(.timerChanged(timer, counter: counter)), at: t,
                                                keysFingerprint: Self.keysFingerprint(contact))
                guard try tx.applyTimer(timer, setBy: TimerPolicy.Change(counter: counter, id: id), contact: contact.id) else {
                    throw EngineError.io("the timer change with \(contact.name) did not take effect; nothing was changed")
                }
                try Self.failIfRefused(row, to: contact, at: t, tx)
            }
        }
        WakeSignal.poke(home: locations.home)
        return id
    }

    /// Deletes what disappeared by now, with its files, and closes its desktop alerts.
    /// Every opening of the account does it first, and the engine every second.
    func deleteExpired() throws(EngineError) -> [ExpiredMessage] {
        let expired = try Self.wrap { try store.deletingExpired(at: clock.now()) }
        let files = attachmentFiles
        for message in expired {
            for file in message.files { unlink(files.absolute(file)) }
            for notification in message.notifications { DesktopAlerts.close(notification) }
        }
        return expired
    }
}

/// The desktop's notification service, beyond posting (`AlertSink`).
enum DesktopAlerts {
    /// Closes notification `id` (freedesktop `CloseNotification`, over the session bus),
    /// when its message disappeared. Without a session bus there is nothing to close.
    static func close(_ id: Int64, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let address = DesktopBus.address(environment: environment), let id = UInt32(exactly: id) else { return }
        try? DesktopBus(address: address).close(id)
    }
}
