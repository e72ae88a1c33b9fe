import Foundation
import RChatCore
import RChatEngine
import RChatStore
import RChatTUI

extension TUIBenchmark {
    static let searchConversations = 20
    static let searchQueries = 50
    static let searchTarget = 50.0

    /// (c) Full-text search over a store of `--messages` (100,000) messages across 20
    /// conversations, through `EngineChatModel.search` (what `/search` and `rchat search`
    /// call): 50 typical queries of one or two words (common and rare words, some typed only
    /// in part), each timed; median and p99 against the 50 ms target. Then the same queries
    /// through the view: `/search WORDS`, Enter, and the frame with the results.
    /// Returns the table's rows.
    func searchFigures(_ directory: String) -> [String] {
        let locations = populateSearch(directory)
        let model: EngineChatModel
        do {
            model = try EngineChatModel(account: try AccountService(locations: locations), wake: {})
        } catch {
            fail("cannot open the search store: \(error)")
        }
        var random = SplitMix64(seed: 7)
        let queries: [SearchQuery] = (0..<Self.searchQueries).map { _ in
            let words = (0..<(random.next() % 2 == 0 ? 1 : 2)).map { _ -> String in
                let word = Vocabulary.word(Vocabulary.rank(&random))
                return random.next() % 4 == 0 ? String(word.prefix(3)) : word
            }
            do { return try SearchQuery(words.joined(separator: " ")) } catch { fail("query \(words): \(error)") }
        }
        var found = 0
        func search(_ query: SearchQuery) {
            do { found += try model.search(query, in: nil).count } catch { fail("search \(query): \(error)") }
        }
        let cold = time { search(queries[0]) }
        // Wall time, and this thread's CPU time: on a shared machine the difference is
        // time spent waiting for a core.
        var cpu: [Double] = []
        let times = queries.map { query in
            let before = Self.threadCPU()
            defer { cpu.append(Self.threadCPU() - before) }
            return time { search(query) }
        }.sorted()
        cpu.sort()
        let view = ChatView(model: model, options: TUIOptions(timeZone: TimeZone(identifier: "UTC")!, openAtStart: "Contact 1"),
                            glyphs: .unicode, rows: rows, columns: columns)
        _ = view.frame()
        let viewTimes = queries.map { query -> Double in
            let took = time {
                for c in "/search \(query)" { view.handle(.character(c)) }
                view.handle(.enter)
                _ = view.frame()
            }
            guard case .search? = view.state.overlay?.kind else { fail("/search \(query) showed no results") }
            view.handle(.escape)
            return took
        }.sorted()
        let median = percentile(times, 0.5), p99 = percentile(times, 0.99)
        let what = "\(grouped(messages)) messages in \(Self.searchConversations) conversations, 1–2 words"
        return [
            "| search, \(what) (median of \(Self.searchQueries); \(found / (Self.searchQueries + 1)) found on average, at most \(SearchQuery.resultLimit)) | \(ms(median)) | ≤ 50 ms \(searchVerdict(median)) |",
            "| search, the same: p99 / the first (cold) | \(ms(p99)) / \(ms(cold)) | ≤ 50 ms \(searchVerdict(p99)) |",
            "| search, the same: CPU time of the searching thread, median / p99 | \(ms(percentile(cpu, 0.5))) / \(ms(percentile(cpu, 0.99))) | — |",
            "| /search in the view: typed, Enter, results drawn (median / p99) | \(ms(percentile(viewTimes, 0.5))) / \(ms(percentile(viewTimes, 0.99))) | — |",
        ]
    }

    /// This thread's CPU time so far, in milliseconds.
    static func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
    }

    private func searchVerdict(_ measured: Double) -> String {
        "\(measured <= Self.searchTarget ? "✓" : "✗"), target/measured \(String(format: "%.1f", Self.searchTarget / max(measured, 0.001)))×"
    }

    /// An account with 20 contacts and `messages` text messages spread over them, stored as
    /// the engine stores what arrives: `insertIncoming`, 512 to a call, which writes each
    /// message's index entry in its transaction.
    private func populateSearch(_ directory: String) -> Locations {
        let locations = Locations(home: "\(directory)/search", deviceDirectory: "\(directory)/search-device")
        let started = Date()
        do {
            try AccountService.create(at: locations, name: "You", relay: try RelayAddress(parsing: Self.offlineRelay))
            let account = try AccountService(locations: locations)
            try account.setSetting(.desktopAlerts, "off")
            var random = SplitMix64(seed: 1)
            try account.store.transaction { tx in
                var contacts: [ContactID] = []
                for n in 1...Self.searchConversations {
                    let key = (0..<32).map { UInt8(truncatingIfNeeded: $0 * 7 + n) }
                    contacts.append(try tx.addContact(NewContact(name: "Contact \(n)", accountKey: key, deviceKey: key.reversed(),
                                                                 deviceCertificate: key + key, relayAddress: Self.offlineRelay),
                                                      at: 1_700_000_000).id)
                }
                var pending = [[IncomingMessage]](repeating: [], count: contacts.count)
                var id = [UInt8](repeating: 0x53, count: 16)
                for n in 0..<messages {
                    withUnsafeBytes(of: UInt64(n).bigEndian) { for (i, b) in $0.enumerated() { id[8 + i] = b } }
                    let c = Int(random.next() % UInt64(contacts.count))
                    let words = (0..<(4 + Int(random.next() % 25))).map { _ in Vocabulary.word(Vocabulary.rank(&random)) }
                    pending[c].append(IncomingMessage(id: MessageID(bytes: id)!, content: .text(words.joined(separator: " ")),
                                                      sentAt: 1_700_000_000 + Int64(n) * 30, seq: nil))
                    if pending[c].count == 512 || n == messages - 1 {
                        for (i, batch) in pending.enumerated() where !batch.isEmpty && (i == c || n == messages - 1) {
                            _ = try tx.insertIncoming(contact: contacts[i], batch, at: 1_700_000_000 + Int64(n) * 30)
                            pending[i] = []
                        }
                    }
                }
            }
        } catch {
            fail("cannot populate the search store: \(error)")
        }
        let seconds = Date().timeIntervalSince(started)
        print("populated \(grouped(messages)) messages over \(Self.searchConversations) conversations, indexed, in \(String(format: "%.1f", seconds)) s")
        return locations
    }
}

/// Made-up words of two or three syllables (4,352 of them), used with a skew: a few are
/// common, most are rare, as in what people write.
enum Vocabulary {
    static let syllables = ["ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "pi", "un", "es", "tra", "bo", "li", "ne", "gu"]
    static let count = syllables.count * syllables.count * (syllables.count + 1)

    static func word(_ rank: Int) -> String {
        let s = syllables.count
        let third = rank / (s * s)
        return syllables[rank % s] + syllables[(rank / s) % s] + (third == 0 ? "" : syllables[third - 1])
    }

    /// A rank skewed towards 0 (the cube of a uniform draw).
    static func rank(_ random: inout SplitMix64) -> Int {
        let u = Double(random.next() % 1_000_000) / 1_000_000
        return min(count - 1, Int(u * u * u * Double(count)))
    }
}
