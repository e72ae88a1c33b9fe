import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire

extension Engine {
    /// Whether a conversation keeps the steady pace now: the setting is on, this run may send
    /// cover, and its session is open — linked on a live connection, the peer present, the
    /// session one that carries what this side writes.
    func keepsPace(_ channel: PairwiseChannel) -> Bool {
        guard policy.sendsCover, settings.steadyTraffic != .off, channel.carries(.cover),
              let link = channel.linkState.link, !link.peerGone,
              let connection = connections[channel.relay], connection.generation == link.generation, connection.client != nil
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
        for channel in channels.values {
            guard keepsPace(channel) else {
                channel.pace = .stopped
                try stopWaitingForSlots(channel)
                continue
            }
            guard case .slot = channel.pace else {
                channel.pace = .slot(endsAt: now + slotSeconds(pace), used: false)
                continue
            }
            let transferring = channel.slotWaiting.chunks
            let end = channel.pace.tick(now: now, nextLength: { transferring ? transferSlotSeconds(pace) : slotSeconds(pace) })
            guard end.slotEnded else { continue }
            // The frame at this slot's end leaves the next slot empty, as a dummy would.
            let next = channel.pace
            try fillSlot(channel, slotUsed: !end.sendDummy)
            channel.pace = next
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
    private func fillSlot(_ channel: PairwiseChannel, slotUsed: Bool) throws(EngineError) {
        for frame in SteadyPace.slotFrames(channel.slotWaiting, slotUsed: slotUsed) {
            switch frame {
            case .receipt:
                // Looked for again at the next slot's end while one went: more may be owed.
                channel.slotWaiting.receipts = false
                if try sendSlotReceipt(channel) {
                    channel.slotWaiting.receipts = true
                    return
                }
            case .chunk:
                // Waiting again if more chunks could go (`sendAttachment`).
                channel.slotWaiting.chunks = false
                if try flushOutbox(channel, inSlot: true) { return }
            case .dummy:
                sendEmptyCover(channel, as: .dummy)
                return
            }
        }
    }

    /// One receipt frame owed to this conversation, if any: a file's progress (the sender's
    /// window waits for it), a whole file's Delivered, then Delivered and Read.
    private func sendSlotReceipt(_ channel: PairwiseChannel) throws(EngineError) -> Bool {
        guard policy.sendsReceipts else { return false }
        if transfers.sendProgressOwed(channel, one: true, context: self) { return true }
        return try receipts.sendSlotFrame(channel, context: self)
    }

    /// The pace stopped (the session ended, or steady traffic was turned off): what waited
    /// for a slot goes as it does without the pace (or waits for the next session).
    private func stopWaitingForSlots(_ channel: PairwiseChannel) throws(EngineError) {
        let waiting = channel.slotWaiting
        guard waiting.receipts || waiting.chunks else { return }
        channel.slotWaiting = SlotWaiting()
        if waiting.receipts {
            transfers.sendProgressOwed(channel, one: false, context: self)
            receipts.schedule(urgent: true, context: self)
        }
        if waiting.chunks { try flushOutbox(channel) }
    }

    /// When the steady pace next needs the engine (the end of a slot, the next cover).
    var nextSteadyTraffic: Double {
        min(channels.nextSlotEnd, connections.nextCover)
    }

    /// An empty `.cover` envelope in the current session: the initiator's confirmation (its
    /// first frame in a new session, `.control`, sent again if refused) or a dummy (`.dummy`,
    /// never sent again). Its sequence is used whatever happens to the frame.
    func sendEmptyCover(_ channel: PairwiseChannel, as kind: EmptyCover) {
        guard var saved = channel.saved,
              let envelope = saved.seal(kind: .cover, messageID: .fresh(clock), body: [], conversation: channel.secret) else { return }
        let frame = LinkFrame.envelope(envelope)
        channel.saved = saved
        do {
            switch kind {
            case .confirmation: try sendOnLink(channel, frame, as: .control(channel.contact.id, frame))
            case .dummy: try sendOnLink(channel, frame, as: .dummy)
            }
        } catch {
            log("cannot send to \(channel.contact.name): \(error)")
        }
    }

    enum EmptyCover { case confirmation, dummy }

    /// Cover for this account's own mailbox (link 0): the relay holds it like a frame for an
    /// offline peer and hands it back; it is acknowledged and dropped (`triage`).
    private func sendOwnCover(on connection: RelayConnection, _ client: any RelayLink) {
        let payload = Padding.padded(Random.bytes(Padding.payloadSizes[0] - Padding.trailerBytes), sizes: Padding.payloadSizes)
        do {
            let seq = try client.send(on: 0, payload, ahead: false, flush: true)
            connection.requests.register(seq, .dummy)
        } catch {
            log("cannot send cover to the relay: \(error)")
        }
    }

    private func uniform() -> Double { steady.uniform() }
    private func slotSeconds(_ pace: SteadyTraffic) -> Double { pace.slotSeconds(uniform: uniform()) ?? .infinity }
    private func transferSlotSeconds(_ pace: SteadyTraffic) -> Double { pace.transferSlotSeconds(uniform: uniform()) ?? .infinity }
    private func coverSeconds(_ pace: SteadyTraffic) -> Double { pace.coverSeconds(uniform: uniform()) ?? .infinity }
}
