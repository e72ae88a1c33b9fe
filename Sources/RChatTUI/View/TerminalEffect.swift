import Foundation

/// Something the view asks of the terminal besides drawing cells: the backend writes
/// `sequence` between frames, where the terminal takes it.
public enum TerminalEffect: Equatable, Sendable {
    /// BEL (0x07): a new message in a conversation that is not open (`bell on`).
    case bell
    /// OSC 52 `ESC ] 52 ; c ; base64(UTF-8 text) BEL`: puts the text on the clipboard
    /// (the terminal may refuse; nothing comes back either way).
    case copy(String)
    /// Mouse reporting on or off (`mouse on|off`): the backend keeps it, turns it off
    /// whenever the terminal goes back to the shell, and on again when it comes back.
    case mouseReporting(Bool)

    /// The bytes written to the terminal, as text.
    public var sequence: String {
        switch self {
        case .bell: "\u{07}"
        case .copy(let text): "\u{1B}]52;c;\(Data(text.utf8).base64EncodedString())\u{07}"
        case .mouseReporting(let on): on ? KeyDecoder.mouseReportingOn : KeyDecoder.mouseReportingOff
        }
    }

    /// Whether a terminal that takes no OSC sequences (the Linux console, `dumb`) gets it.
    public var needsOSC: Bool {
        switch self {
        case .bell: false
        case .copy, .mouseReporting: true
        }
    }
}
