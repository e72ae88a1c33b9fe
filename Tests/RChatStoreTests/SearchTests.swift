import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// Full-text search (schema step `SchemaSearch`): the index entry is written with the
/// message, in its transaction, and goes with it; what the user types is words, never FTS5
/// syntax.
final class SearchTests: StoreTestCase {
    func search(_ text: String, in conversation: ConversationID? = nil) throws -> [SearchHit] {
        try store.search(SearchQuery(text), in: conversation)
    }

    /// Rows the index itself has for `word` (as a prefix), whatever the messages table says.
    func indexed(_ word: String) throws -> Int64 {
        try XCTUnwrap(store.database.queryOne("SELECT count(*) FROM message_search WHERE message_search MATCH ?",
                                              [.text("\"\(word)\"*")])).int64(at: 0)
    }

    /// FTS5's check against the messages themselves (rank 1: the content too): every text
    /// message has its entry, with its words, and nothing else has one.
    func assertIndexMatchesMessages(file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertNoThrow(try store.database.execute("INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 1)"),
                         file: file, line: line)
    }

    func testSentAndReceivedMessagesAreFoundNewestFirstWithTheirPlaceInTheConversation() throws {
        let asked = MessageID.random(), answered = MessageID.random(), later = MessageID.random()
        try store.insertOutgoing(contact: sam, id: asked, content: .text("Quick question about the café?"), at: 100)
        _ = try store.addSystemRow(contact: sam, kind: .couldNotDecrypt, text: "a row between", action: nil, messageIDs: [], at: 101)
        _ = try store.insertIncoming(contact: sam, [
            IncomingMessage(id: answered, content: .text("quickly:\nthe CAFE opens\tat nine"), sentAt: 102, seq: nil),
            IncomingMessage(id: .random(), content: .text("nothing to see"), sentAt: 103, seq: nil),
        ], at: 104)
        try store.insertOutgoing(contact: sam, id: later, content: .text("quick"), at: 105)

        let hits = try search("quick")
        XCTAssertEqual(hits.map(\.message), [later, answered, asked], "newest first; \"quick\" is a prefix of \"quickly\"")
        XCTAssertEqual(hits.map(\.direction), [.outgoing, .incoming, .outgoing])
        XCTAssertEqual(hits.map(\.at), [105, 102, 100])
        XCTAssertEqual(hits.map(\.conversation), Array(repeating: sam.conversation, count: 3))
        XCTAssertEqual(hits[1].snippet, "quickly: the CAFE opens at nine", "on one line")
        // The index is the item's place as the view's paging counts (messages and rows).
        let total = try store.conversationLength(conversation: sam.conversation)
        for hit in hits {
            let page = try store.conversation(contact: sam, limit: 1, skippingLatest: total - 1 - hit.index)
            guard case .message(let m)? = page.first else { return XCTFail("item \(hit.index) is not a message") }
            XCTAssertEqual(m.id, hit.message)
        }
        // Every word must match; case and accents do not matter.
        XCTAssertEqual(try search("cafe QUICK").map(\.message), [answered, asked])
        XCTAssertEqual(try search("café nine").map(\.message), [answered])
        XCTAssertEqual(try search("quick nothing"), [])
        XCTAssertEqual(try search("uick"), [], "words match from their start")
        try assertIndexMatchesMessages()
    }

    func testOneConversationOrAllButDeletedContacts() throws {
        let ann = try store.addContact(Self.newContact("Ann", key: 9), at: 1).id
        let fromSam = try store.insertIncoming(contact: sam, id: .random(), content: .text("lunch at noon"), at: 10)
        let toAnn = try store.insertOutgoing(contact: ann, id: .random(), content: .text("lunch tomorrow?"), at: 11)
        XCTAssertEqual(try search("lunch").count, 2)
        XCTAssertEqual(try search("lunch", in: ann.conversation).map(\.conversation), [ann.conversation])
        XCTAssertEqual(try search("lunch", in: sam.conversation).map(\.conversation), [sam.conversation])
        XCTAssertNotNil(fromSam); _ = toAnn

        try store.setDeleted(contact: sam, true)
        XCTAssertEqual(try search("lunch").map(\.conversation), [ann.conversation], "a deleted conversation is not searched")
        XCTAssertEqual(try search("lunch", in: sam.conversation), [])
    }

    func testTheIndexEntryIsWrittenInTheTransactionThatStoresTheMessage() throws {
        struct Abandon: Error {}
        XCTAssertThrowsError(try store.transaction { tx in
            try tx.insertOutgoing(contact: sam, id: .random(), content: .text("pineapple sent"), at: 10)
            _ = try tx.insertIncoming(contact: sam, [IncomingMessage(id: .random(), content: .text("pineapple received"), sentAt: 11, seq: nil)], at: 12)
            XCTAssertEqual(try tx.search(SearchQuery("pineapple")).count, 2, "indexed inside the transaction")
            throw Abandon()
        })
        XCTAssertEqual(try indexed("pineapple"), 0, "rolled back with the messages")
        XCTAssertEqual(try count("messages"), 0)

        // Committed: another connection (another process) finds both at once.
        try store.transaction { tx in
            try tx.insertOutgoing(contact: sam, id: .random(), content: .text("pineapple sent"), at: 10)
            _ = try tx.insertIncoming(contact: sam, [IncomingMessage(id: .random(), content: .text("pineapple received"), sentAt: 11, seq: nil)], at: 12)
        }
        let other = try Store(path: dbPath)
        defer { other.close() }
        XCTAssertEqual(try other.search(SearchQuery("pineapple")).count, 2)
        try assertIndexMatchesMessages()
    }

    func testOnlyTextIsIndexed() throws {
        let file = Attachment(kind: .file, name: "pineapple.pdf", size: 3, contentHash: [UInt8](repeating: 1, count: 32),
                              key: [UInt8](repeating: 2, count: 32))
        try store.insertIncoming(contact: sam, id: .random(), content: .attachment(file), at: 10)
        try store.insertIncoming(contact: sam, id: .random(), content: .control(.timerChanged(.oneHour)), at: 11)
        XCTAssertEqual(try indexed("pineapple"), 0)
        XCTAssertEqual(try indexed("hour"), 0)
        XCTAssertEqual(try search("pineapple"), [])
        try assertIndexMatchesMessages()
    }

    func testDeletingAMessageLeavesNothingSearchable() throws {
        let gone = try store.insertOutgoing(contact: sam, id: .random(), content: .text("secret plans for friday"), at: 10)
        try store.insertIncoming(contact: sam, id: .random(), content: .text("friday works"), at: 11)
        XCTAssertEqual(try indexed("secret"), 1)
        try store.database.execute("DELETE FROM messages WHERE rowid = ?", [.integer(gone.rawValue)])
        XCTAssertEqual(try indexed("secret"), 0, "the trigger removed its entry from the index itself")
        XCTAssertEqual(try indexed("friday"), 1)
        XCTAssertEqual(try search("friday").count, 1)
        try assertIndexMatchesMessages()
        // And a whole conversation's worth.
        try store.database.execute("DELETE FROM messages WHERE conversation_id = ?", [.integer(sam.rawValue)])
        XCTAssertEqual(try indexed("friday"), 0)
        XCTAssertEqual(try XCTUnwrap(store.database.queryOne("SELECT count(*) FROM message_search")).int64(at: 0), 0)
    }

    func testAMessagesRowidNeverChanges() throws {
        let row = try store.insertOutgoing(contact: sam, id: .random(), content: .text("keep my place"), at: 10)
        XCTAssertThrowsError(try store.database.execute("UPDATE messages SET rowid = rowid + 100 WHERE rowid = ?", [.integer(row.rawValue)]))
        XCTAssertEqual(try search("place").count, 1)
    }

    /// Whatever the user types, the search runs or says there is nothing to search for:
    /// FTS5's syntax (quotes, *, NEAR, -, ^, :, parentheses, column filters) is only text.
    func testHostileQueriesNeverRaiseAnFTSError() throws {
        let target = try store.insertIncoming(contact: sam, id: .random(),
                                              content: .text("say \"hi\" NEAR me (quick-fix) a*b text:hello ^caret, and or not"), at: 10)
        try store.insertIncoming(contact: sam, id: .random(), content: .text("an unrelated line"), at: 11)
        let found: [String] = ["\"hi\"", "NEAR", "NEAR(me", "quick-fix", "-fix", "fix)", "(quick", "a*b", "text:hello",
                               "text:", "^caret", "hi\"", "\"\"hi", "say AND me", "say OR", "NOT me", "me*", "{text}:hello"]
        for text in found {
            let hits = try search(text)
            XCTAssertEqual(hits.map(\.message), [try XCTUnwrap(store.message(XCTUnwrap(target))).id], "\(text)")
        }
        XCTAssertEqual(try search("OR unrelated"), [], "OR is a word, not an operator")
        XCTAssertEqual(try search("a*").count, 2, "* is not syntax: the word a, as a prefix")
        XCTAssertEqual(try search("\u{1b}[2J").count, 0, "an escape sequence is a separator and the word [2J")
        XCTAssertEqual(try search("me -unrelated").count, 0, "- is not NOT: unrelated must match too")
        for text in ["\"", "\"\"", "*", "-", "(", ")", "^", ":", "'", "\u{0}", "\u{1b}", "- * \" ( ) :", "\u{202e}"] {
            XCTAssertThrowsError(try SearchQuery(text), "\(text.debugDescription)") { XCTAssertEqual($0 as? SearchQueryError, .noWords) }
        }
        // NUL and escape are separators: the words around them still match.
        XCTAssertEqual(try search("say\u{0}hi").count, 1)
        XCTAssertEqual(try search("say\u{1b}NEAR").count, 1)

        // Random punctuation around words: never an error from the index.
        var generator = SystemRandomNumberGenerator()
        let pieces = ["\"", "*", "-", "+", "^", ":", "(", ")", "{", "}", "NEAR", "AND", "OR", "NOT", "say", "hi", "'", ",", "\\", "%", "\u{0}", " ", "é"]
        for _ in 0..<500 {
            let text = (0..<Int.random(in: 1...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            do {
                _ = try search(text)
            } catch is SearchQueryError {
                // nothing to search for, or too many words: refused before the index
            } catch {
                XCTFail("\(text.debugDescription): \(error)")
            }
        }
    }
}

/// A store made by the schema before search opens with every message it had found by
/// search (the step indexes them), and indexes what comes after.
final class SearchMigrationTests: XCTestCase {
    var home: URL!
    var path: String { home.appendingPathComponent(Store.fileName).path }

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-search-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    override func tearDown() { try? FileManager.default.removeItem(at: home) }

    static let stepsBefore = Array(Migrations.all.prefix { $0.sql != SchemaSearch.sql })

    func testExistingMessagesAreSearchableAfterTheStep() throws {
        let old = try Store(path: path, migrations: Self.stepsBefore)
        XCTAssertNil(try old.database.queryOne("SELECT 1 FROM sqlite_master WHERE name = 'message_search'"))
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1)
        let sent = MessageID.random(), received = MessageID.random()
        // As the code before this step stored them: no index entry.
        try StoreTestCase.insertAsBefore(old.database, contact: sam, id: sent, .outgoing, .text("Remember the umbrella"), at: 11, position: 1)
        let file = Attachment(kind: .photo, name: "umbrella.jpg", size: 3, contentHash: [UInt8](repeating: 1, count: 32),
                              key: [UInt8](repeating: 2, count: 32))
        try StoreTestCase.insertAsBefore(old.database, contact: sam, .incoming, .attachment(file), at: 12, position: 2)
        try StoreTestCase.insertAsBefore(old.database, contact: sam, id: received, .incoming, .text("umbrella? it's sunny\nsee you"),
                                         at: 13, position: 3)
        old.close()

        let store = try Store(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.database.userVersion, Store.schemaVersion)
        let hits = try store.search(SearchQuery("umbrella"))
        XCTAssertEqual(hits.map(\.message), [received, sent])
        XCTAssertEqual(hits.map(\.index), [2, 0])
        XCTAssertEqual(hits.first?.snippet, "umbrella? it's sunny see you")
        try store.database.execute("INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 1)")
        let later = try store.insertOutgoing(contact: sam, id: .random(), content: .text("umbrella found"), at: 13)
        XCTAssertEqual(try store.search(SearchQuery("umbrella found")).map(\.message), [try XCTUnwrap(store.message(later)).id])
    }
}
