import Foundation
import Synchronization
import XCTest
import RChatCore
@testable import RChatTUI

let utc = TimeZone(identifier: "UTC")!

func makeView(_ model: FakeChatModel, rows: Int = 24, columns: Int = 80, glyphs: Glyphs = .unicode,
              options: TUIOptions = TUIOptions(timeZone: utc), open: String? = nil,
              clock: MonotonicClock = SystemMonotonicClock()) -> ChatView {
    var options = options
    options.timeZone = utc
    if let open { options.openAtStart = open }
    return ChatView(model: model, options: options, glyphs: glyphs, rows: rows, columns: columns,
                    now: { model.clock }, clock: clock)
}

extension ChatView {
    func press(_ keys: Key...) { for k in keys { handle(k) } }
    func type(_ text: String) { for c in text { handle(.character(c)) } }
}

extension Screen {
    /// The whole screen as one string, for failure messages.
    var dump: String { text.enumerated().map { "\($0.offset < 10 ? " " : "")\($0.offset)|\($0.element)" }.joined(separator: "\n") }

    func contains(_ s: String) -> Bool { position(of: s) != nil }
}

/// Sam with a short conversation: an incoming message, outgoing ones in several states.
func samConversation() -> (FakeChatModel, [String: MessageID]) {
    let model = FakeChatModel()
    model.contact("Sam")
    model.contact("Alex")
    var ids: [String: MessageID] = [:]
    ids["hello"] = model.addMessage("Sam", .incoming, "Hello! Are you there?")
    ids["yes"] = model.addMessage("Sam", .outgoing, "Yes, here", status: .read)
    ids["later"] = model.addMessage("Sam", .outgoing, "See you later", status: .delivered)
    return (model, ids)
}

/// A new private folder (0700) for one test, removed by the caller's `defer`.
func temporaryFolder(_ purpose: String) -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-\(purpose)-\(UUID().uuidString)").path
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
}

/// An executable shell script at `path`.
func writeScript(_ path: String, _ body: String) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(("#!/bin/sh\n" + body + "\n").utf8),
                                   attributes: [.posixPermissions: 0o700])
}

/// Polls `condition` every 10 ms until it holds or `seconds` pass; whether it held.
func eventually(within seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// A monotonic clock the test moves by hand.
final class HandClock: MonotonicClock, Sendable {
    private let now = Mutex(0.0)
    func seconds() -> Double { now.withLock { $0 } }
    func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
}

/// A test case whose temporary folders (`folder(_:)`) are removed after each test.
class FolderTestCase: XCTestCase {
    private var folders: [String] = []

    override func tearDown() {
        for folder in folders { try? FileManager.default.removeItem(atPath: folder) }
        folders = []
        super.tearDown()
    }

    func folder(_ purpose: String) -> String {
        let path = temporaryFolder(purpose)
        folders.append(path)
        return path
    }
}
