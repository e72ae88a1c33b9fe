import RChatStore

/// The engine as the transfers component sees it (`TransfersContext`): the store, the clocks,
/// the account's home, the incoming-file limit, the links, the forged-frame count and the
/// batch's items, through these and nothing else.
extension Engine: TransfersContext {
    var home: String { account.locations.home }

    var maxIncomingMB: Int { settings.maxIncomingMB }

    func isConnected(_ channel: PairwiseChannel) -> Bool { connections[channel.relay]?.client != nil }

    /// Chunks a sender keeps ahead of what the receiver reported stored, for the simulation's
    /// scripted upload (`Transfers.fileWindowChunks`).
    public static var fileWindow: Int { Transfers.fileWindowChunks }
}
