import Foundation

/// CPU time of each thread of this process and of a child process, read from /proc, so a
/// run can say where the machine's cores went without a profiler slowing it down.
struct ThreadCPU {
    /// Thread id → (name, user + system time in clock ticks).
    var threads: [Int: (name: String, ticks: Int)] = [:]
    var childTicks = 0

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func now(child: Int32) -> ThreadCPU {
        var sample = ThreadCPU()
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for tid in tasks.compactMap(Int.init) {
            guard let ticks = ticks(stat: "/proc/self/task/\(tid)/stat") else { continue }
            let name = (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            sample.threads[tid] = (name, ticks)
        }
        sample.childTicks = ticks(stat: "/proc/\(child)/stat") ?? 0
        return sample
    }

    /// utime + stime: fields 14 and 15 of a stat line, counted after the ")" that ends the name.
    private static func ticks(stat path: String) -> Int? {
        guard let line = try? String(contentsOfFile: path, encoding: .utf8),
              let close = line.lastIndex(of: ")") else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// Milliseconds of CPU per thread name between `earlier` and `self`, largest first;
    /// threads born since are counted whole and marked "new".
    func since(_ earlier: ThreadCPU, childName: String) -> [(String, Double)] {
        var byName: [String: Int] = [:]
        for (tid, now) in threads {
            let before = earlier.threads[tid]
            let name = before == nil ? "\(now.name) (new)" : now.name
            byName[name, default: 0] += now.ticks - (before?.ticks ?? 0)
        }
        byName[childName] = childTicks - earlier.childTicks
        return byName.filter { $0.value > 0 }
            .map { ($0.key, Double($0.value) * 1000 / Self.ticksPerSecond) }
            .sorted { $0.1 > $1.1 }
    }
}
