import RChatWire

/// Frames by kind, in each direction: per connection (logged when it closes) and for the
/// whole run (logged at stop), so a test can check what a client did and did not send.
/// Fixed arrays, not dictionaries: counting is on the per-frame path.
struct FrameCounters {
    enum Inbound: Int, CaseIterable {
        case hello, auth, present, registerInvites, send, request, acknowledge, ping, moveMailbox, leave
    }
    enum Outbound: Int, CaseIterable {
        case hello, challenge, welcome, linked, peerGone, sent, refused, deliver, drained, pong, error
    }

    var received = [Int](repeating: 0, count: Inbound.allCases.count)
    var sent = [Int](repeating: 0, count: Outbound.allCases.count)

    mutating func count(_ kind: Inbound) { received[kind.rawValue] += 1 }
    mutating func count(_ kind: Outbound) { sent[kind.rawValue] += 1 }

    mutating func add(_ other: FrameCounters) {
        for i in received.indices { received[i] += other.received[i] }
        for i in sent.indices { sent[i] += other.sent[i] }
    }

    var summary: String {
        let inbound = Inbound.allCases.filter { received[$0.rawValue] > 0 }.map { "\($0)=\(received[$0.rawValue])" }
        let outbound = Outbound.allCases.filter { sent[$0.rawValue] > 0 }.map { "\($0)=\(sent[$0.rawValue])" }
        return "in: \(inbound.isEmpty ? "none" : inbound.joined(separator: " ")); out: \(outbound.isEmpty ? "none" : outbound.joined(separator: " "))"
    }
}

extension ClientMessage {
    var counterKind: FrameCounters.Inbound {
        switch self {
        case .auth: return .auth
        case .present: return .present
        case .registerInvites: return .registerInvites
        case .send, .sendAhead: return .send
        case .request: return .request
        case .acknowledge: return .acknowledge
        case .ping: return .ping
        case .moveMailbox: return .moveMailbox
        case .leave: return .leave
        }
    }
}
