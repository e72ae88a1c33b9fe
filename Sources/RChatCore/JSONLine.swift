/// One JSON object on one line, keys in the order given — the scripting interface's form
/// (README, "Using rChat from the command line"), where tests and people read fields in a fixed order.
public enum JSONLine {
    public enum Value {
        case string(String)
        case int(Int64)
        case bool(Bool)
        case null
        case strings([String])
        /// A nested object, keys in the order given.
        case object([(String, Value)])
        /// A list of objects.
        case objects([[(String, Value)]])

        public static func int(_ v: Int) -> Value { .int(Int64(v)) }
        public static func optionalString(_ v: String?) -> Value { v.map(Value.string) ?? .null }
    }

    public static func object(_ fields: [(String, Value)]) -> String {
        render(.object(fields))
    }

    static func renderObject(_ fields: [(String, Value)]) -> String {
        var out = "{"
        for (i, (key, value)) in fields.enumerated() {
            if i > 0 { out += "," }
            out += quote(key) + ":" + render(value)
        }
        return out + "}"
    }

    static func render(_ value: Value) -> String {
        switch value {
        case .string(let s): return quote(s)
        case .int(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .strings(let list): return "[" + list.map(quote).joined(separator: ",") + "]"
        case .object(let fields): return renderObject(fields)
        case .objects(let list): return "[" + list.map(renderObject).joined(separator: ",") + "]"
        }
    }

    /// RFC 8259 string escaping. Every character a terminal could act on (`TerminalText`:
    /// C0 and C1 controls, DEL, U+2028/U+2029, direction and other format characters) is
    /// written as a `\uXXXX` escape (a surrogate pair above U+FFFF), so a line carries no
    /// raw control and still decodes to exactly the text; the rest passes through as UTF-8.
    public static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where TerminalText.standIn(for: scalar) != nil:
                for unit in String(scalar).utf16 { out += unicodeEscape(unit) }
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private static func unicodeEscape(_ unit: UInt16) -> String {
        let hex = String(unit, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}
