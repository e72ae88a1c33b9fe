/// Sizes and rates as people read them, in the command line and the view.
///
/// 1024-based and written KB, MB, GB, TB, PB, EB (1 KB = 1,024 bytes, 1 MB = 1,048,576
/// bytes): "0 B", "512 B", "1.5 KB", "12.3 MB", "1.0 GB". Below 1 KB in whole bytes, above
/// with one decimal, rounded half up, in the largest unit that keeps the number below
/// 1024 once rounded (1,048,575 bytes is "1.0 MB", not "1024.0 KB").
public enum ByteCount {
    static let units = ["KB", "MB", "GB", "TB", "PB", "EB"]

    public static func display(_ bytes: UInt64) -> String {
        display(bytes, roundingUp: false)
    }

    /// Bytes per second: "3.1 MB/s", "512 B/s"; a rate that is not a finite number above
    /// zero is "0 B/s".
    public static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "0 B/s" }
        let bytes = bytesPerSecond >= Double(UInt64.max) ? UInt64.max : UInt64(bytesPerSecond.rounded())
        return display(bytes) + "/s"
    }

    /// `roundingUp`: tenths rounded up instead of half up, so that a size above a limit is
    /// never shown as the limit itself ("100.1 MB" for 100 MB and one byte).
    static func display(_ bytes: UInt64, roundingUp: Bool) -> String {
        guard bytes >= 1024 else { return "\(bytes) B" }
        var unit: UInt128 = 1024
        for (index, name) in units.enumerated() {
            let scaled = UInt128(bytes) * 10
            let tenths = roundingUp ? (scaled + unit - 1) / unit : (scaled + unit / 2) / unit
            if tenths < 10_240 || index == units.count - 1 {
                return "\(tenths / 10).\(tenths % 10) \(name)"
            }
            unit *= 1024
        }
        preconditionFailure("the last unit always answers")
    }
}
