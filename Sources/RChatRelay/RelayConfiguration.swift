import Foundation

/// Everything `rchat-relay` can be told on its command line.
public struct RelayConfiguration: Sendable {
    /// The hard cap on holding (DESIGN §3): an operator may lower it, never raise it.
    public static let maximumHoldHours = 72

    public var host = "127.0.0.1"
    public var port: UInt16 = 0
    public var keyFile: String
    public var persistPath: String?
    public var holdHours = 72
    /// Held items per mailbox.
    public var quota = 10_000
    /// Message requests (to an invite token) held for one mailbox, counted apart from
    /// `quota`: strangers cannot fill the room a friend's messages need. The same number is
    /// the most one mailbox is sent in a burst, refilled at that many per hour.
    public var requestQuota = 1_000
    public var maxConnections = 1024
    /// Connections from one host (an IPv4 address, an IPv6 /64): one machine cannot take
    /// every slot. A household behind one NAT runs one engine per account, plus a check.
    public var maxConnectionsPerAddress = 32
    /// Seconds a connection may take from accept to authentication.
    public var handshakeTimeout = 30.0
    /// Seconds a frame may take from its first byte to its last.
    public var frameTimeout = 30.0
    /// Seconds a presented rendezvous code waits for its match.
    public var pairingTimeout = 300.0
    /// Seconds an authenticated connection with no code waiting and no link may go without
    /// sending a frame. The engine pings every `RelayProtocol.keepaliveSeconds` (60 s), a
    /// fifth of this default, so a real client is never closed for idling.
    public var idleTimeout = 300.0
    /// Held payload bytes over all mailboxes; beyond it sends are refused ("relay full").
    public var maxHeldBytes = 1 << 30
    /// Items (and bytes) handed to one connection before it must acknowledge some. A client
    /// acknowledges a batch once it has committed it; a window of a batch or two leaves it
    /// idle for every round trip (512 items cost a draining engine half its rate, 2,048 a
    /// quarter). The bytes bound what a connection can have in flight either way.
    public var handoverWindow = 8192
    public var handoverWindowBytes = 2 << 20
    /// A connection whose unread output passes this is dropped: it is not reading. Checked
    /// after every frame it sends and every handover, so what a client that never reads
    /// costs is this, one handover window and one read's worth of answers at most.
    public var maxOutputBytes = 16 << 20
    /// Presented codes waiting for a match, per connection and per mailbox (over its
    /// connections). An engine presents 7 codes per contact whose conversation this relay
    /// hosts (3 days × 2 reconnect counters, and today's recovery code), so 1,024 is 146
    /// such contacts. There is no relay-wide bound of its own: the table holds at most
    /// `maxConnections × maxPendingCodesPerConnection` codes, so one client filling its
    /// share never stops a pair elsewhere from linking.
    public var maxPendingCodesPerConnection = 1_024
    public var maxPendingCodesPerMailbox = 2_048
    /// Links made for one mailbox: a burst, refilled per second. Two engines make up to 7
    /// links per conversation when they meet (every code both present matches), so 2,048 is
    /// two reconnects of a client with 146 contacts; 8 a second refills one in 2 minutes.
    public var linkBurst = 2_048
    public var linksPerSecond = 8.0
    /// Links one connection keeps (a link costs about 700 bytes, both ends); at the bound,
    /// links whose peer left are dropped, and a new link beyond it is not made.
    public var maxLinksPerConnection = 2_048
    /// Invite tokens kept per mailbox (the newest) and in all.
    public var maxInvitesPerMailbox = 16
    public var maxInvites = 1_000_000

    public init(keyFile: String) {
        self.keyFile = keyFile
    }

    public struct UsageError: Error, CustomStringConvertible {
        public let description: String
        init(_ d: String) { description = d }
    }

    public static let usage = """
        usage: rchat-relay --listen HOST:PORT [--key-file FILE] [--persist FILE] [--hold-hours H]
                           [--quota N] [--request-quota N] [--max-connections N]
                           [--max-connections-per-address N] [--handshake-timeout S]
                           [--frame-timeout S] [--idle-timeout S] [--pairing-timeout S]
                           [--max-held-bytes N] [--max-output-bytes N]
                           [--max-codes-per-connection N] [--max-codes-per-mailbox N]
                           [--max-links-per-connection N]
        """

    /// The default key file: $XDG_STATE_HOME/rchat-relay/relay.key.
    public static func defaultKeyFile(environment: [String: String]) -> String {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return state + "/rchat-relay/relay.key"
    }

    public static func parse(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) -> RelayConfiguration {
        var config = RelayConfiguration(keyFile: defaultKeyFile(environment: environment))
        var listen: String?
        var i = 0
        func value(_ flag: String) throws(UsageError) -> String {
            i += 1
            guard i < arguments.count else { throw UsageError("\(flag) needs a value") }
            return arguments[i]
        }
        func number(_ flag: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
            let text = try value(flag)
            guard let n = Int(text), range.contains(n) else { throw UsageError("\(flag) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"") }
            return n
        }
        func seconds(_ flag: String) throws(UsageError) -> Double {
            let text = try value(flag)
            guard let s = Double(text), s > 0, s <= 86_400 else { throw UsageError("\(flag) must be a number of seconds above 0, not \"\(text)\"") }
            return s
        }
        while i < arguments.count {
            let flag = arguments[i]
            switch flag {
            case "--listen": listen = try value(flag)
            case "--key-file": config.keyFile = try value(flag)
            case "--persist": config.persistPath = try value(flag)
            case "--hold-hours":
                let text = try value(flag)
                guard let h = Int(text), h >= 1 else { throw UsageError("--hold-hours must be a whole number of hours from 1 to \(maximumHoldHours), not \"\(text)\"") }
                guard h <= maximumHoldHours else {
                    throw UsageError("--hold-hours \(h) refused: a relay holds messages for at most \(maximumHoldHours) hours")
                }
                config.holdHours = h
            case "--quota": config.quota = try number(flag, 1...10_000_000)
            case "--request-quota": config.requestQuota = try number(flag, 1...10_000_000)
            case "--max-connections": config.maxConnections = try number(flag, 1...1_000_000)
            case "--max-connections-per-address": config.maxConnectionsPerAddress = try number(flag, 1...1_000_000)
            case "--handshake-timeout": config.handshakeTimeout = try seconds(flag)
            case "--frame-timeout": config.frameTimeout = try seconds(flag)
            case "--idle-timeout": config.idleTimeout = try seconds(flag)
            case "--pairing-timeout": config.pairingTimeout = try seconds(flag)
            case "--max-held-bytes": config.maxHeldBytes = try number(flag, 1...(1 << 40))
            case "--max-output-bytes": config.maxOutputBytes = try number(flag, (64 << 10)...(1 << 32))
            case "--max-codes-per-connection": config.maxPendingCodesPerConnection = try number(flag, 1...1_000_000)
            case "--max-codes-per-mailbox": config.maxPendingCodesPerMailbox = try number(flag, 1...1_000_000)
            case "--max-links-per-connection": config.maxLinksPerConnection = try number(flag, 1...1_000_000)
            case "-h", "--help": throw UsageError(usage)
            default: throw UsageError("unknown option \"\(flag)\" (see rchat-relay --help)")
            }
            i += 1
        }
        guard let listen else { throw UsageError("--listen HOST:PORT is required\n\(usage)") }
        guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
            throw UsageError("--listen must be HOST:PORT (port 0 picks a free one), not \"\(listen)\"")
        }
        var host = String(listen[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw UsageError("--listen needs a host, e.g. 0.0.0.0:7070") }
        config.host = host
        config.port = port
        return config
    }

    var holdSeconds: Int64 { Int64(holdHours) * 3600 }
}
