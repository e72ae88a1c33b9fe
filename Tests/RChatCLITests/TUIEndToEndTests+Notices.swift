import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

extension TUIEndToEndTests {
    /// "Sending beach.png." stays in the status bar while the photo is Sending (the relay
    /// frozen) and goes by itself once the relay took it, with no key pressed.
    func testSendingAPhotoLeavesTheStatusBarOnceItWasSent() throws {
        try warmedUpViews()
        let picture = world.box.path("beach.png")
        try Data(Self.redOverBluePNG).write(to: URL(fileURLWithPath: picture))
        world.freezeRelay()
        try screens.type(session("alice"), "/photo \(picture)")
        let rows = 30
        try screen("alice", "the notice while it is Sending") { $0.screenLines.count >= rows - 1 && $0.screenLines[rows - 2].contains("Sending beach.png.") }
        try screen("alice", "the photo's line") { Self.conversationLine("Photo · beach.png", in: $0) != nil }
        world.thawRelay()
        let after = try screen("alice", "the notice gone once it was sent", seconds: 30) {
            $0.screenLines.count >= rows - 1 && !$0.screenLines[rows - 2].contains("Sending") && $0.screenLines[rows - 2].contains("F1 help")
        }
        XCTAssertNotNil(Self.conversationLine("Photo · beach.png", in: after))
        // Both views quit; the lingers they leave are ended by their PIDs.
        for person in ["alice", "sam"] {
            try screens.keys(session(person), "C-q")
            try screen(person, "\(person)'s view quit cleanly") { $0.contains("[exited 0]") }
            try stopLinger(person)
        }
    }
}
