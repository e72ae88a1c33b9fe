import Foundation
import RChatCore
import RChatCommandLine

/// Everything `rchat-relay` can be told on its command line.
public struct RelayConfiguration: Sendable {
    /// The hard cap on holding (docs/PROTOCOL.md, "Refusals and limits"): an operator may lower it, never raise it.
    public static let maximumHoldHours = 72

    public var host = "127.0.0.1"
    public var port: UInt16 = 0
    public var keyFile: String
    public var persistPath: String?
    /// NATS servers (`nats://HOST:PORT`) whose JetStream holds the mailboxes: a stateless
    /// node of a cluster (empty: one process, in memory or `persistPath`).
    public var clusterServers: [String] = []
    public var holdHours = 72
    /// Held items per mailbox.
    public var quota = 10_000
    /// Payload bytes of the items `quota` counts, per mailbox (256 MiB): a mailbox full of
    /// 64 KiB file chunks reaches this long before 10,000 items.
    public var quotaBytes = 256 << 20
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
    /// Held payload bytes sent from one host (an IPv4 address, an IPv6 /64) and by one
    /// mailbox, over every recipient: one stranger cannot fill `maxHeldBytes` (a quarter
    /// and an eighth of it, and never more: `heldBytesPerHost`, `heldBytesPerSender`; a real
    /// user sends its contacts far less than is held for them).
    public var maxHeldBytesPerHost = 256 << 20
    public var maxHeldBytesPerSender = 128 << 20
    /// Cover (a `send` on link 0, held for the sender's own mailbox and handed straight
    /// back) held at once per mailbox: an engine has one or two out at a time.
    public var coverQuota = 16
    public var coverQuotaBytes = 64 << 10
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
    /// Links made for one mailbox: a burst, refilled per second. Two engines make up to 4
    /// links per conversation when they meet (every code both present matches), so 2,048 is
    /// two reconnects of a client with 256 contacts; 8 a second refills one in 2 minutes.
    public var linkBurst = 2_048
    public var linksPerSecond = 8.0
    /// Links one connection keeps (a link costs about 700 bytes, both ends); at the bound,
    /// links whose peer left are dropped, and a new link beyond it is not made.
    public var maxLinksPerConnection = 2_048
    /// Invite tokens kept per mailbox (the newest), registered from one host (an IPv4
    /// address, an IPv6 /64; never more than a quarter of `maxInvites`: `invitesPerHost`)
    /// and in all. A household behind one NAT registers one per account.
    public var maxInvitesPerMailbox = 16
    public var maxInvitesPerHost = 1_024
    public var maxInvites = 1_000_000
    /// Seconds an invite stays registered without being registered again (30 days). An
    /// engine registers its invite at every connection, and the relay refreshes those of
    /// connected mailboxes, so only the invites of clients gone that long are forgotten.
    public var inviteExpirySeconds = 30 * 86_400
    /// The least a line must matter to be logged: `.note` logs every event, `.warning`
    /// only refusals and limits, `.error` only failures.
    public var logLevel = LogLevel.note

    public init(keyFile: String) {
        self.keyFile = keyFile
    }

    public typealias UsageError = RChatCommandLine.UsageError

    /// Every option `rchat-relay` takes, with its help: the parser, `usage` and `help` come
    /// from these, and each declared default is the property's initial value.
    enum Options {
        private static let defaults = RelayConfiguration(keyFile: "")

        static let listen = Declared<String?>.text("--listen", "HOST:PORT", help: "where to accept connections (port 0 picks a free one)")
        static let keyFile = Declared<String?>.text("--key-file", "FILE", help: "the relay's key (default $XDG_STATE_HOME/rchat-relay/relay.key)")
        static let persist = Declared<String?>.text("--persist", "FILE", help: "keep held items in this SQLite file across restarts (default: in memory)")
        static let cluster = Declared<String?>.text("--cluster", "nats://HOST:PORT[,...]", help: "a node of a cluster: mailboxes held in these NATS servers' JetStream, nothing kept here")
        static let holdHours = Declared<String?>.text("--hold-hours", "H", help: "hours an item is held, 1 to \(maximumHoldHours) (default \(defaults.holdHours))")
        static let logLevel = Declared.choice("--log-level", "LEVEL", default: defaults.logLevel, help: "the least a line must matter to be logged")
        static let help = Option.flag("--help", aliases: ["-h"], help: "print this help")

        /// An option that sets one property from its typed value.
        struct Setting: Sendable {
            let option: Option
            let apply: @Sendable (ParsedArguments, inout RelayConfiguration) -> Void
        }

        static func count(_ name: String, _ range: ClosedRange<Int>, _ property: WritableKeyPath<RelayConfiguration, Int> & Sendable,
                          _ help: String) -> Setting {
            let declared = Declared.integer(name, in: range, default: defaults[keyPath: property], help: help)
            return Setting(option: declared.option) { given, config in config[keyPath: property] = given[declared] }
        }

        static func seconds(_ name: String, _ property: WritableKeyPath<RelayConfiguration, Double> & Sendable, _ help: String) -> Setting {
            let declared = Declared.seconds(name, default: defaults[keyPath: property], help: help)
            return Setting(option: declared.option) { given, config in config[keyPath: property] = given[declared] }
        }

        static let settings: [Setting] = [
            count("--quota", 1...10_000_000, \.quota, "held items per mailbox"),
            count("--quota-bytes", (1 << 20)...(1 << 40), \.quotaBytes, "held payload bytes per mailbox (message requests count apart)"),
            count("--request-quota", 1...10_000_000, \.requestQuota, "message requests held per mailbox"),
            count("--max-connections", 1...1_000_000, \.maxConnections, "connections in all"),
            count("--max-connections-per-address", 1...1_000_000, \.maxConnectionsPerAddress, "connections from one host (IPv4 address, IPv6 /64)"),
            seconds("--handshake-timeout", \.handshakeTimeout, "from accept to authentication"),
            seconds("--frame-timeout", \.frameTimeout, "from a frame's first byte to its last"),
            seconds("--idle-timeout", \.idleTimeout, "an authenticated connection without a frame"),
            seconds("--pairing-timeout", \.pairingTimeout, "a presented code waiting for its match"),
            count("--max-held-bytes", 1...(1 << 40), \.maxHeldBytes, "held payload bytes over all mailboxes"),
            count("--max-held-bytes-per-host", 1...(1 << 40), \.maxHeldBytesPerHost, "held payload bytes sent from one host (IPv4 address, IPv6 /64); at most a quarter of --max-held-bytes"),
            count("--max-held-bytes-per-sender", 1...(1 << 40), \.maxHeldBytesPerSender, "held payload bytes sent by one mailbox; at most an eighth of --max-held-bytes"),
            count("--cover-quota", 1...1_000_000, \.coverQuota, "cover frames (link 0) held per mailbox"),
            count("--cover-quota-bytes", 1...(1 << 30), \.coverQuotaBytes, "cover payload bytes held per mailbox"),
            count("--max-output-bytes", (64 << 10)...(1 << 32), \.maxOutputBytes, "unread output after which a connection is dropped"),
            count("--max-codes-per-connection", 1...1_000_000, \.maxPendingCodesPerConnection, "presented codes waiting, per connection"),
            count("--max-codes-per-mailbox", 1...1_000_000, \.maxPendingCodesPerMailbox, "presented codes waiting, per mailbox"),
            count("--max-links-per-connection", 1...1_000_000, \.maxLinksPerConnection, "links one connection keeps"),
            count("--max-invites", 1...100_000_000, \.maxInvites, "invite tokens registered in all"),
            count("--max-invites-per-host", 1...100_000_000, \.maxInvitesPerHost, "invite tokens registered from one host (IPv4 address, IPv6 /64); at most a quarter of --max-invites"),
            count("--invite-expiry", 1...(366 * 86_400), \.inviteExpirySeconds, "seconds an invite stays registered unless registered again (a connected client's is kept)"),
        ]

        /// Everything but --listen and --help, in the order the usage shows them.
        static let optional = [keyFile.option, persist.option, cluster.option, holdHours.option] + settings.map(\.option) + [logLevel.option]
        static let parser = OptionParser([listen.option] + optional + [help], helpHint: "rchat-relay --help")
    }

    /// Every option `rchat-relay` accepts, as declared: what its help and the shell
    /// completion scripts are made of.
    public static var declaredOptions: [Option] { Options.parser.options }

    public static let usage = OptionHelp.usage("rchat-relay", required: [Options.listen.option], optional: Options.optional)

    /// `--help`: the usage line, then every option with its help and default.
    public static let help = usage + "\n\n" + OptionHelp.list(Options.parser.options)

    /// The default key file: $XDG_STATE_HOME/rchat-relay/relay.key.
    public static func defaultKeyFile(environment: [String: String]) -> String {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return state + "/rchat-relay/relay.key"
    }

    public static func parse(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) -> RelayConfiguration {
        let given = try Options.parser.parse(arguments)
        if given.has(Options.help) { throw UsageError(description: help) }
        try given.expectPositionals(max: 0)
        var config = RelayConfiguration(keyFile: given[Options.keyFile] ?? defaultKeyFile(environment: environment))
        config.persistPath = given[Options.persist]
        if let text = given[Options.cluster] {
            config.clusterServers = try parseCluster(text)
            if config.persistPath != nil {
                throw UsageError(description: "--cluster and --persist exclude each other: a cluster node keeps nothing of its own")
            }
        }
        if let text = given[Options.holdHours] {
            guard let h = Int(text), h >= 1 else { throw UsageError(description: "--hold-hours must be a whole number of hours from 1 to \(maximumHoldHours), not \"\(text)\"") }
            guard h <= maximumHoldHours else {
                throw UsageError(description: "--hold-hours \(h) refused: a relay holds messages for at most \(maximumHoldHours) hours")
            }
            config.holdHours = h
        }
        for setting in Options.settings { setting.apply(given, &config) }
        config.logLevel = given[Options.logLevel]
        guard let listen = given[Options.listen] else { throw UsageError(description: "--listen HOST:PORT is required\n\(usage)") }
        guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
            throw UsageError(description: "--listen must be HOST:PORT (port 0 picks a free one), not \"\(listen)\"")
        }
        var host = String(listen[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw UsageError(description: "--listen needs a host, e.g. 0.0.0.0:7070") }
        config.host = host
        config.port = port
        return config
    }

    /// `nats://HOST:PORT[,…]`: each server a URL with a host and a port.
    static func parseCluster(_ text: String) throws(UsageError) -> [String] {
        let servers = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        for server in servers {
            let rest = server.hasPrefix("nats://") ? server.dropFirst("nats://".count) : nil
            guard let rest, let colon = rest.lastIndex(of: ":"), colon != rest.startIndex,
                  UInt16(rest[rest.index(after: colon)...]) != nil else {
                throw UsageError(description: "--cluster takes nats://HOST:PORT[,nats://HOST:PORT...], not \"\(server)\"")
            }
        }
        return servers
    }

    var holdSeconds: Int64 { Int64(holdHours) * 3600 }

    /// The budgets in force: as given, but never more than a quarter (a host) and an eighth
    /// (a mailbox) of `maxHeldBytes`, so that a lowered relay-wide bound lowers them too.
    var heldBytesPerHost: Int { min(maxHeldBytesPerHost, maxHeldBytes / 4) }
    var heldBytesPerSender: Int { min(maxHeldBytesPerSender, maxHeldBytes / 8) }
    var invitesPerHost: Int { min(maxInvitesPerHost, max(1, maxInvites / 4)) }
}
