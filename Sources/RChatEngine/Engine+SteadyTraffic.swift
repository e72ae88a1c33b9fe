import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire

extension Engine {
    /// Whether a conversation keeps the steady pace now: the setting is on, this run may send
    /// cover, and its session is open — linked on a live connection, the peer present, the
    /// session one that carries what this side writes.
    func keepsPace(_ conversation: LiveConversation) -> Bool {
        guard policy.sendsCover, settings.steadyTraffic != .off, conversation.carries(.cover),
              let link = conversation.linkState.link, !link.peerGone,
              let connection = connections[conversation.relay], connection.generation == link.generation, connection.client != nil
        else { return false }
        return true
    }

    /// Steady and cover traffic (`SteadyTraffic`): every open session sends a dummy in each
    /// slot that carried nothing real, and the connection to this account's own relay sends
    /// cover to its own mailbox at random intervals. Real frames never wait for either.
    func keepSteadyTraffic() {
        let now = ticks
        let pace = settings.steadyTraffic
        for conversation in conversations.values {
            guard keepsPace(conversation) else {
                conversation.pace = .stopped
                continue
            }
            guard case .slot = conversation.pace else {
                conversation.pace = .slot(endsAt: now + slotSeconds(pace), used: false)
                continue
            }
            if conversation.pace.tick(now: now, nextLength: { slotSeconds(pace) }).sendDummy {
                sendEmptyCover(conversation, as: .dummy)
            }
        }
        for connection in connections.values {
            guard policy.sendsCover, pace != .off, connection.address == identity.relay, let client = connection.client else {
                connection.coverAt = .infinity
                continue
            }
            if connection.coverAt == .infinity {
                connection.coverAt = now + coverSeconds(pace)
            } else if connection.coverAt <= now {
                connection.coverAt = now + coverSeconds(pace)
                sendOwnCover(on: connection, client)
            }
        }
    }

    /// When the steady pace next needs the engine (the end of a slot, the next cover).
    var nextSteadyTraffic: Double {
        var next = Double.infinity
        for conversation in conversations.values { if let end = conversation.pace.endsAt { next = min(next, end) } }
        for connection in connections.values { next = min(next, connection.coverAt) }
        return next
    }

    /// An empty `.cover` envelope in the current session: the initiator's confirmation (its
    /// first frame in a new session, `.control`, sent again if refused) or a dummy (`.dummy`,
    /// never sent again). Its sequence is used whatever happens to the frame.
    func sendEmptyCover(_ conversation: LiveConversation, as kind: EmptyCover) {
        guard var saved = conversation.saved, let keys = saved.sendKeys, let sequence = saved.takeSendSequence() else { return }
        let envelope = Envelope.seal(kind: .cover, messageID: .fresh(clock), sequence: sequence, body: [], keys: keys,
                                     conversation: conversation.secret)
        let frame = LinkFrame.envelope(envelope)
        conversation.saved = saved
        do {
            switch kind {
            case .confirmation: try sendOnLink(conversation, frame, as: .control(conversation.contact.id, frame))
            case .dummy: try sendOnLink(conversation, frame, as: .dummy)
            }
        } catch {
            log("cannot send to \(conversation.contact.name): \(error)")
        }
    }

    enum EmptyCover { case confirmation, dummy }

    /// Cover for this account's own mailbox (link 0): the relay holds it like a frame for an
    /// offline peer and hands it back; it is acknowledged and dropped (`isTraceless`).
    private func sendOwnCover(on connection: RelayConnection, _ client: any RelayLink) {
        let payload = Padding.padded(Random.bytes(Padding.payloadSizes[0] - Padding.trailerBytes), sizes: Padding.payloadSizes)
        do {
            let seq = try client.send(on: 0, payload, ahead: false, flush: true)
            connection.inFlight[seq] = .dummy
        } catch {
            log("cannot send cover to the relay: \(error)")
        }
    }

    private func uniform() -> Double { Double.random(in: 0..<1, using: &random) }
    private func slotSeconds(_ pace: SteadyTraffic) -> Double { pace.slotSeconds(uniform: uniform()) ?? .infinity }
    private func coverSeconds(_ pace: SteadyTraffic) -> Double { pace.coverSeconds(uniform: uniform()) ?? .infinity }
}
