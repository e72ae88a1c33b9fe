import Foundation

/// Times as the view prints them, in one time zone (tests pin it to UTC).
struct TimeText {
    let timeZone: TimeZone
    private let calendar: Calendar

    init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    private func local(_ at: Int64) -> Int64 {
        at + Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(at))))
    }

    /// "14:05"
    func clock(_ at: Int64) -> String {
        let secondsOfDay = ((local(at) % 86_400) + 86_400) % 86_400
        return two(Int(secondsOfDay / 3600)) + ":" + two(Int(secondsOfDay / 60 % 60))
    }

    /// A number that changes exactly when the local date does.
    func day(_ at: Int64) -> Int64 {
        let l = local(at)
        return l >= 0 ? l / 86_400 : (l - 86_399) / 86_400
    }

    /// "2024-05-03"
    func date(_ at: Int64) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(at)))
        return "\(c.year ?? 0)-\(two(c.month ?? 0))-\(two(c.day ?? 0))"
    }

    /// "2024-05-03 14:05:09"
    func full(_ at: Int64) -> String {
        let s = ((local(at) % 60) + 60) % 60
        return date(at) + " " + clock(at) + ":" + two(Int(s))
    }

    private func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// A length of time as a player shows it: "0:05", "12:40" (whole seconds, rounded).
    static func length(_ seconds: Double) -> String {
        let whole = Int(max(0, seconds).rounded())
        return "\(whole / 60):\(whole % 60 < 10 ? "0" : "")\(whole % 60)"
    }
}
