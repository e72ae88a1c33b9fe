import RChatCore
import RChatSQL

/// Reading the store's own types out of rows; a value that does not fit is a damaged file,
/// reported as such rather than trapped on.
extension Row {
    func messageID(_ column: String, table: String) throws -> MessageID {
        let bytes = try blob(column)
        guard let id = MessageID(bytes: bytes) else {
            throw StoreError.malformedValue(table: table, column: column, detail: "\(bytes.count) bytes, not a 16-byte id")
        }
        return id
    }

    func messageIDs(_ column: String, table: String) throws -> [MessageID] {
        let bytes = try blob(column)
        guard bytes.count % MessageID.byteCount == 0 else {
            throw StoreError.malformedValue(table: table, column: column, detail: "\(bytes.count) bytes, not a list of 16-byte ids")
        }
        return stride(from: 0, to: bytes.count, by: MessageID.byteCount).map {
            MessageID(bytes: Array(bytes[$0..<$0 + MessageID.byteCount]))!
        }
    }

    func status(_ column: String, table: String) throws -> MessageStatus? {
        guard let text = try optionalString(column) else { return nil }
        guard let status = MessageStatus(rawValue: text) else {
            throw StoreError.malformedValue(table: table, column: column, detail: "unknown status \(text)")
        }
        return status
    }

    func enumValue<T: RawRepresentable>(_ column: String, table: String, as: T.Type) throws -> T where T.RawValue == String {
        let text = try string(column)
        guard let value = T(rawValue: text) else {
            throw StoreError.malformedValue(table: table, column: column, detail: "unknown value \(text)")
        }
        return value
    }

    /// A message's content with its stored bytes (what an envelope carries: never encoded again).
    func content(_ column: String, table: String) throws -> (content: MessageContent, encoded: [UInt8]) {
        let bytes = try blob(column)
        do {
            return (try MessageContent(decoding: bytes), bytes)
        } catch {
            throw StoreError.malformedContent(table: table, column: column, error)
        }
    }

    func contactID(_ column: String) throws -> ContactID { ContactID(try int64(column)) }
    func messageRowID(_ column: String) throws -> MessageRowID { MessageRowID(try int64(column)) }
}
