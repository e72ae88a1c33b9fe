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

    /// Steady and cover traffic (`SteadyTraffic`): every open session sends one frame at each
    /// slot's end — a receipt owed, else a chunk of a file (the slots shorter while one goes),
    /// else a dummy if nothing real went in the slot (`SteadyPace.slotFrames`) — and the
    /// connection to this account's own relay sends cover to its own mailbox at random
    /// intervals. Messages never wait for either.
    func keepSteadyTraffic() throws(EngineError) {
        let now = ticks
        let pace = settings.steadyTraffic
        for conversation in conversations.values {
            guard keepsPace(conversation) else {
                conversation.pace = .stopped
                try stopWaitingForSlots(conversation)
                continue
            }
            guard case .slot = conversation.pace else {
                conversation.pace = .slot(endsAt: now + slotSeconds(pace), used: false)
                continue
            }
            let transferring = conversation.slotWaiting.chunks
            let end = conversation.pace.tick(now: now, nextLength: { transferring ? transferSlotSeconds(pace) : slotSeconds(pace) })
            guard end.slotEnded else { continue }
            // The frame at this slot's end leaves the next slot empty, as a dummy would.
            let next = conversation.pace
            try fillSlot(conversation, slotUsed: !end.sendDummy)
            conversation.pace = next
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

    /// The frame at a slot's end: the first of `SteadyPace.slotFrames` that goes.
    private func fillSlot(_ conversation: LiveConversation, slotUsed: Bool) throws(EngineError) {
        for frame in SteadyPace.slotFrames(conversation.slotWaiting, slotUsed: slotUsed) {
            switch frame {
            case .receipt:
                // Looked for again at the next slot's end while one went: more may be owed.
                conversation.slotWaiting.receipts = false
                if try sendSlotReceipt(conversation) {
                    conversation.slotWaiting.receipts = true
                    return
                }
            case .chunk:
                // Waiting again if more chunks could go (`sendAttachment`).
                conversation.slotWaiting.chunks = false
                if try flushOutbox(conversation, inSlot: true) { return }
            case .dummy:
                sendEmptyCover(conversation, as: .dummy)
                return
            }
        }
    }

    /// One receipt frame owed to this conversation, if any: a file's progress (the sender's
    /// window waits for it), a whole file's Delivered, then Delivered and Read.
    private func sendSlotReceipt(_ conversation: LiveConversation) throws(EngineError) -> Bool {
        guard policy.sendsReceipts else { return false }
        if sendProgressOwed(conversation, one: true) { return true }
        if try sendFileReceipt(conversation) { return true }
        return try sendReceipts(conversation, frames: 1).sent > 0
    }

    /// The pace stopped (the session ended, or steady traffic was turned off): what waited
    /// for a slot goes as it does without the pace (or waits for the next session).
    private func stopWaitingForSlots(_ conversation: LiveConversation) throws(EngineError) {
        let waiting = conversation.slotWaiting
        guard waiting.receipts || waiting.chunks else { return }
        conversation.slotWaiting = SlotWaiting()
        if waiting.receipts {
            sendProgressOwed(conversation, one: false)
            scheduleReceipts(urgent: true)
        }
        if waiting.chunks { try flushOutbox(conversation) }
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
    private func transferSlotSeconds(_ pace: SteadyTraffic) -> Double { pace.transferSlotSeconds(uniform: uniform()) ?? .infinity }
    private func coverSeconds(_ pace: SteadyTraffic) -> Double { pace.coverSeconds(uniform: uniform()) ?? .infinity }
}
