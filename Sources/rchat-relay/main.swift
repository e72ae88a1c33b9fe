import Foundation
import RChatCore
import RChatRelay
import RChatWire

// rchat-relay: argument parsing and wiring only (the relay is the RChatRelay library; its
// options are declared in RelayConfiguration).
// Exit codes: 0 clean stop, 1 runtime failure, 2 usage error.

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--version"] {
    print(RChatVersion.line(program: "rchat-relay", relayProtocol: RelayProtocol.version))
    exit(0)
}
if arguments.contains("--help") || arguments.contains("-h") {
    print(RelayConfiguration.help)
    exit(0)
}

let configuration: RelayConfiguration
do {
    configuration = try RelayConfiguration.parse(arguments)
} catch {
    Logger.standardError(prefix: "rchat-relay: ").error(error.description)
    exit(2)
}
let log = Logger.standardError(prefix: "rchat-relay: ", threshold: configuration.logLevel)

let relay: Relay
Relay.blockStopSignals()
do {
    relay = try Relay(configuration: configuration, log: log)
} catch {
    log.error(error.description)
    exit(1)
}
relay.stopOnSignals()
relay.log.note("listening on \(configuration.host):\(relay.address.port); holding up to \(configuration.holdHours) h, quota \(configuration.quota) items and \(configuration.quotaBytes) bytes per mailbox, at most \(configuration.maxConnections) connections (\(configuration.maxConnectionsPerAddress) per address)" + (configuration.persistPath.map { ", persisting to \($0)" } ?? (configuration.clusterServers.isEmpty ? ", in memory" : ", held in the cluster's JetStream")))
// Written straight to the descriptor: one line, flushed, whatever stdout is connected to.
FileHandle.standardOutput.write(Data("relay \(relay.address)\n".utf8))
do {
    try relay.run()
} catch {
    log.error(error.description)
    exit(1)
}
exit(0)
