import RChatCore
import RChatStore

/// The engine as the receipts component sees it (`ReceiptContext`): the store, the channels,
/// room at the relays and the commit pipeline's durability, through these and nothing else.
extension Engine: ReceiptContext {
    var receiptWindowSeconds: Double { Double(settings.receiptWindowMilliseconds) / 1000 }

    var sendsReceipts: Bool { policy.sendsReceipts }

    func channel(_ contact: ContactID) -> PairwiseChannel? { channels[contact] }

    func hasRoom(for channel: PairwiseChannel) -> Bool { connections[channel.relay]?.client?.hasRoom() ?? false }

    func flushLink(of channel: PairwiseChannel) { try? connections[channel.relay]?.client?.flush() }

    func isDurable(_ channel: PairwiseChannel) -> Bool { commits.isDurable(channel) }
}
