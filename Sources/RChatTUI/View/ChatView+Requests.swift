import RChatCore

/// Message requests answered in the view (`a`, `d`, `b`), and `/safety`.
extension ChatView {
    /// The request the keys answer: the list's choice in the list, else the open conversation.
    var requestUnderKeys: ConversationSummary? {
        let summary = state.focus == .list
            ? (state.conversations.indices.contains(state.listCursor) ? state.conversations[state.listCursor] : nil)
            : state.openSummary
        return summary?.state == .request ? summary : nil
    }

    /// `a`: accepted at once, unless it uses a contact's name: then asked which it is.
    func acceptRequest() {
        guard let request = requestUnderKeys else { return }
        if let namesake = request.namesake, let known = state.summary(namesake) {
            state.overlay = Overlay(kind: .acceptRequest(request.id, namesake: namesake), title: "Accept \(request.name)?", lines: [
                Overlay.Line(RequestNames.namesakeRow(used: known.name, contact: known.name)),
                Overlay.Line(""),
                Overlay.Line("r  replace: \(known.name)'s conversation goes on with these keys (\(known.name) reinstalled)", hang: 3),
                Overlay.Line("n  new: accept \(request.name) as a contact of its own", hang: 3),
                Overlay.Line("Any other key: not now.", .dim),
            ])
            return
        }
        accept(request.id, replacing: nil)
    }

    func accept(_ request: ConversationID, replacing: ConversationID?) {
        let from = state.summary(request)?.name ?? "the request"
        do {
            let goesOn = try model.acceptRequest(request, replacing: replacing)
            reloadConversations()
            open(goesOn)
            state.focus = .composer
            let name = state.summary(goesOn)?.name ?? from
            say((replacing == nil ? "Accepted \(name)." : "\(name) now has the keys of the request from \(from).")
                + " The keys were not checked in person: /safety shows the number to compare with them.")
        } catch {
            say(error.description, error: true)
        }
    }

    /// `d`: asks first, as deleting a conversation does.
    func askToDecline() {
        guard let request = requestUnderKeys else { return }
        state.overlay = Overlay(kind: .confirmDecline(request.id), title: "Decline \(request.name)?", lines: [
            Overlay.Line("Delete the message request from \(request.name) and its messages? Later requests from "
                         + "the same keys are dropped (adding their code brings them back)."),
            Overlay.Line("y declines; any other key keeps it.", .bold),
        ])
    }

    func decline(_ request: ConversationID) {
        let name = state.summary(request)?.name ?? "the request"
        do {
            try model.declineRequest(request)
            if state.openConversation == request { close() }
            drafts.forget(request)
            reloadConversations()
            say("Declined the message request from \(name).")
        } catch {
            say(error.description, error: true)
        }
    }

    /// `b`: blocked at once (`/unblock` undoes it).
    func blockRequest() {
        guard let request = requestUnderKeys else { return }
        do {
            try model.setBlocked(request.id, true)
            reloadConversations()
            say("Blocked \(request.name): nothing from them is kept; /unblock undoes it.")
        } catch {
            say(error.description, error: true)
        }
    }

    /// The overlay's answer for the request questions; false for any other overlay.
    func requestOverlayKey(_ key: Key) -> Bool {
        guard let kind = state.overlay?.kind else { return false }
        switch kind {
        case .acceptRequest(let request, let namesake):
            state.overlay = nil
            switch key {
            case .character("r"), .character("R"): accept(request, replacing: namesake)
            case .character("n"), .character("N"): accept(request, replacing: nil)
            default: say("Left \(state.summary(request)?.name ?? "the request") as it is.")
            }
            return true
        case .confirmDecline(let request):
            state.overlay = nil
            if key == .character("y") || key == .character("Y") {
                decline(request)
            } else {
                say("Kept the message request from \(state.summary(request)?.name ?? "them").")
            }
            return true
        default:
            return false
        }
    }

    /// `/safety [NAME]`: the number `rchat add` printed, to compare with the contact.
    func showSafetyNumber(_ contact: ConversationSummary) {
        do {
            let number = try model.safetyNumber(of: contact.id)
            // Twelve groups, as `rchat safety` prints them, in two rows of six to read aloud.
            let groups = number.split(separator: " ")
            let half = (groups.count + 1) / 2
            state.overlay = Overlay(kind: .safety, title: "Safety number: \(contact.name)", lines: [
                Overlay.Line("safety number: " + groups.prefix(half).joined(separator: " "), .bold),
                Overlay.Line(String(repeating: " ", count: "safety number: ".count) + groups.dropFirst(half).joined(separator: " "), .bold),
                Overlay.Line(""),
                Overlay.Line("Compare it with \(contact.name) in person or on a call: the same number on both screens "
                             + "means the keys here are theirs (`rchat safety NAME` prints it too)."),
            ])
        } catch {
            say(error.description, error: true)
        }
    }

    /// What the header shows for a request: what each key does, in `room` columns (shorter
    /// when the long form does not fit, so every key stays on screen).
    static func requestKeysHint(namesake: String?, glyphs: Glyphs, room: Int = .max) -> String {
        let long = ["a accept (pins the keys in their code\(namesake.map { ", or gives them to \($0)" } ?? ""))",
                    "d decline (deletes it)", "b block"].joined(separator: glyphs.separator)
        return TextWidth.columns(of: long) <= room ? long : ["a accept", "d decline", "b block"].joined(separator: glyphs.separator)
    }
}
