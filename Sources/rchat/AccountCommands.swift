import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine

enum AccountCommands {
    static let all: [Command] = [initCommand, codeCommand, exportCommand, rotateCommand]

    static let initCommand = Command(
        name: "init", usage: "rchat init --name NAME --relay ADDRESS | --import FILE",
        summary: "Create an account (and this machine's device key, if none), or restore an exported one.",
        details: """
        ADDRESS is what `rchat-relay` prints: HOST:PORT/KEY.
        --import FILE restores an account exported with `rchat account export` into an empty
        home; the passphrase comes from RCHAT_PASSPHRASE or a prompt. Conversations start over:
        session state and messages are never part of an export.
        """,
        options: [.text("--name", "NAME", help: "the account's name, shown to contacts"),
                  .text("--relay", "ADDRESS", help: "the relay that holds its messages"),
                  .text("--import", "FILE", help: "restore this export instead")]
    ) { args, locations in
        try args.expectPositionals(max: 0)
        if let file = args.value("--import") {
            guard args.value("--name") == nil, args.value("--relay") == nil else {
                throw Arguments.UsageError(description: "--import cannot be combined with --name or --relay")
            }
            // Asked for only once the file is known to be an export rChat would open.
            let identity = try AccountService.restore(at: locations, from: file, passphrase: Passphrase.obtain(confirm: false))
            say("restored account \(identity.name) in \(locations.home)")
            return
        }
        guard let name = args.value("--name") else { throw Arguments.UsageError(description: "missing --name NAME") }
        guard let relayText = args.value("--relay") else { throw Arguments.UsageError(description: "missing --relay ADDRESS") }
        guard ContactCode.validName(name) else {
            throw Arguments.UsageError(description: "name must be 1 to \(ContactCode.maxNameBytes) bytes, without control characters, direction marks, line breaks or surrounding spaces")
        }
        let relay: RelayAddress
        do { relay = try RelayAddress(parsing: relayText) } catch { throw Arguments.UsageError(description: "\(error)") }
        let identity = try AccountService.create(at: locations, name: name, relay: relay)
        say("created account \(identity.name) in \(locations.home)")
    }

    static let codeCommand = Command(
        name: "code", usage: "rchat code",
        summary: "Print my contact code (one line) to hand to a friend."
    ) { args, locations in
        try args.expectPositionals(max: 0)
        say(try AccountService(locations: locations).contactCode().text)
    }

    static let exportCommand = Command(
        name: "account export", usage: "rchat account export FILE",
        summary: "Write a passphrase-sealed backup of the account: keys, settings, contacts.",
        details: """
        Session state, messages and the device key are never exported. The passphrase comes
        from RCHAT_PASSPHRASE or a prompt. FILE must not exist yet (not even as a symlink);
        it is written 0600 through a new temporary file in its directory, never through a link.
        """
    ) { args, locations in
        try args.expectPositionals(max: 1)
        let file = try args.positional(0, "FILE")
        let service = try AccountService(locations: locations)
        // Anything there, a symlink included (dangling or not), is never written through.
        guard (try? FileManager.default.attributesOfItem(atPath: file)) == nil else {
            throw Arguments.UsageError(description: "\(file) already exists; choose a new file name")
        }
        try service.export(to: file, passphrase: Passphrase.obtain(confirm: true))
        say("exported account \(try service.identity().name) to \(file)")
    }
}

extension AccountCommands {
    static let rotateCommand = Command(
        name: "keys rotate", usage: "rchat keys rotate",
        summary: "Replace the account key with a new one, signed by the old one.",
        details: """
        Contacts learn the new key at their next session with you, check the old key's
        signature and pin it. Nothing is resent automatically: they see how many messages
        may not have arrived and can resend them. Your contact code carries the new key.
        """
    ) { args, locations in
        try args.expectPositionals(max: 0)
        try AccountService(locations: locations).rotateKeys()
        say("rotated the account key; contacts are told at their next session with you")
    }
}
