/// Sizes and rates in the words people read them: "532 KB", "1.2 MB", "12 MB/s" (decimal
/// units, as file managers show sizes; one decimal below 100 of a unit, none above).
public enum ByteCount {
    private static let units = ["KB", "MB", "GB", "TB", "PB"]

    public static func human(_ bytes: UInt64) -> String {
        if bytes < 1000 { return "\(bytes) B" }
        var value = Double(bytes) / 1000
        var unit = 0
        // Rounded as it is shown, so 999,960 bytes reads "1.0 MB", never "1000 KB".
        while unit < units.count - 1, (value < 100 ? (value * 10).rounded() / 10 : value.rounded()) >= 1000 {
            value /= 1000
            unit += 1
        }
        return number(value) + " " + units[unit]
    }

    /// Bytes per second.
    public static func rate(_ bytesPerSecond: Double) -> String {
        human(UInt64(max(0, bytesPerSecond.rounded()))) + "/s"
    }

    private static func number(_ value: Double) -> String {
        if value >= 99.95 { return String(Int(value.rounded())) }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
