/// Sizes as people read them (1024-based). Interim until the shared formatter lands.
public enum ByteCount {
    public static func display(_ bytes: UInt64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return "\((value * 10).rounded() / 10) \(units[unit])"
    }
}
