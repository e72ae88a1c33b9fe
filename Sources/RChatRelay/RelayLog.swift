import Foundation

/// One line per notable event on stderr. Never payloads, never keys: mailboxes appear as
/// a short prefix of their id, connections by number.
public final class RelayLog: @unchecked Sendable {
    private let write: (String) -> Void

    public init(write: @escaping (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) {
        self.write = write
    }

    public func note(_ line: String) { write("rchat-relay: " + line) }
}
