import Foundation
import XCTest
import RChatCore
@testable import RChatTUI

let utc = TimeZone(identifier: "UTC")!

func makeView(_ model: FakeChatModel, rows: Int = 24, columns: Int = 80, glyphs: Glyphs = .unicode,
              options: TUIOptions = TUIOptions(timeZone: utc), open: String? = nil) -> ChatView {
    var options = options
    options.timeZone = utc
    if let open { options.openAtStart = open }
    return ChatView(model: model, options: options, glyphs: glyphs, rows: rows, columns: columns,
                    now: { model.clock })
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
