/// The rows a conversation shows about recovery, worded exactly as the seeds word them
/// (plural forms as natural English). "phone" stays: it is the product's word.
public enum RecoveryRows {
    static func messages(_ n: Int) -> String { n == 1 ? "1 message" : "\(n) messages" }

    /// Shown to the sender when rChat resent by itself.
    public static func resentAutomatically(name: String, count: Int) -> String {
        "\(name)'s phone couldn't read \(messages(count)), so rChat sent \(count == 1 ? "it" : "them") again."
    }

    /// Shown to the sender when the messages are Not delivered and await Resend.
    public static func couldNotBeRead(name: String, count: Int) -> String {
        "\(messages(count)) couldn't be read on \(name)'s phone."
    }

    /// Shown to the side that lost its state, once it has told the sender.
    public static func couldNotDecrypt(name: String, count: Int) -> String {
        "\(messages(count)) from \(name) couldn't be decrypted on this phone. \(name) has been told, so they can resend them."
    }

    /// Shown to the sender when the contact started over without a usable notice.
    public static func startedOver(name: String, count: Int) -> String {
        "\(name)'s phone started a new secure session with you. \(messages(count)) may not have reached them."
    }

    /// Shown when the contact's session comes from a device whose key is not pinned: until
    /// their code is entered again, nothing is sent to it.
    public static func newDevice(name: String) -> String {
        "\(name) is using a new device. Enter their code again to verify it."
    }

    /// Shown when a handshake proved an account key other than the pinned one: nothing is
    /// sent until the contact's code is entered again.
    public static func keysDontMatch(name: String) -> String {
        "\(name)'s keys don't match the ones you verified. Nothing can be sent to \(name) until you enter their code again."
    }

    /// Shown to the sender after the contact rotated their keys.
    public static func keysChanged(name: String, count: Int) -> String {
        count == 0 ? "\(name)'s keys changed."
            : "\(name)'s keys changed. \(messages(count)) may not have arrived; resend \(count == 1 ? "it" : "them") if you trust the change."
    }
}
