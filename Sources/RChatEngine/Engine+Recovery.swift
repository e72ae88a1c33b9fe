import RChatCrypto

/// The engine as the recovery component sees it (`RecoveryContext`): the store, the clock,
/// the device key, the links and the forged-frame count, through these and nothing else.
extension Engine: RecoveryContext {
    var noticeSigningKey: SigningKey { account.device }
}
