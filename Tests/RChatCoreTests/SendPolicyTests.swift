import XCTest
@testable import RChatCore

/// `SendPolicy`, every input: the contact's standing, the session's device, and each kind of
/// frame with each origin (seed 000, "Tap to resend").
final class SendPolicyTests: XCTestCase {
    /// The row "Sam is using a new device…" sits at position 10.
    static let row: Int64 = 10
    static let devices: [SendPolicy.Device] = [.pinned, .unpinned(announcedAt: row), .unpinned(announcedAt: nil)]
    static let frames: [SendPolicy.Frame] = [
        .message(.byHand(askedAt: row - 1)), .message(.byHand(askedAt: row)), .message(.byHand(askedAt: row + 1)),
        .message(.byHand(askedAt: row + 500)), .message(.automatic), .receipt, .notice, .keyAnnouncement, .cover,
    ]

    func testAContactNotOkGetsNothingWhateverTheDevice() {
        let expected: [SendPolicy.Contact: SendPolicy.Decision] = [
            .keysDontMatch: .refuse, .blocked: .refuse, .deleted: .refuse, .request: .hold(.notAccepted),
        ]
        XCTAssertEqual(Set(expected.keys).union([.ok]), Set(SendPolicy.Contact.allCases), "every standing is named")
        for (contact, decision) in expected {
            for device in Self.devices {
                for frame in Self.frames {
                    XCTAssertEqual(SendPolicy.decide(frame, to: contact, device: device), decision, "\(contact) \(device) \(frame)")
                }
            }
        }
    }

    func testThePinnedDeviceGetsEverything() {
        for frame in Self.frames {
            XCTAssertEqual(SendPolicy.decide(frame, to: .ok, device: .pinned), .send, "\(frame)")
        }
    }

    /// The seed's new phone: what the user sent or resent by hand after the row goes; what
    /// rChat would send by itself waits for the code.
    func testANewDeviceGetsWhatTheUserAskedForAfterTheRow() {
        let device = SendPolicy.Device.unpinned(announcedAt: Self.row)
        let expected: [(SendPolicy.Frame, SendPolicy.Decision)] = [
            (.message(.byHand(askedAt: Self.row - 1)), .hold(.newDevice)),   // written before the row
            (.message(.byHand(askedAt: Self.row)), .hold(.newDevice)),       // the row's own place: not after it
            (.message(.byHand(askedAt: Self.row + 1)), .send),               // written (or resent) just below it
            (.message(.byHand(askedAt: Self.row + 500)), .send),
            (.message(.automatic), .hold(.newDevice)),                       // an automatic resend waits
            (.receipt, .hold(.newDevice)),
            (.notice, .hold(.newDevice)),
            (.keyAnnouncement, .hold(.newDevice)),
            (.cover, .send),                                                 // empty: it hides when messages go
        ]
        XCTAssertEqual(expected.map(\.0), Self.frames, "every frame is named once")
        for (frame, decision) in expected {
            XCTAssertEqual(SendPolicy.decide(frame, to: .ok, device: device), decision, "\(frame)")
        }
    }

    /// No row told the user about the device: nothing they asked for counts as asking for it.
    func testANewDeviceNoRowAnnouncedGetsNoMessage() {
        for frame in Self.frames {
            let decision = SendPolicy.decide(frame, to: .ok, device: .unpinned(announcedAt: nil))
            XCTAssertEqual(decision, frame == .cover ? .send : .hold(.newDevice), "\(frame)")
        }
    }

    func testWordsNameTheContact() {
        XCTAssertEqual(SendPolicy.words(.newDevice, name: "Sam"), "waiting for you to verify Sam's new device")
        XCTAssertEqual(SendPolicy.words(.notAccepted, name: "Sam"), "waiting for you to accept Sam's message request")
    }

    /// What the user writes now, for every standing: the blocked, the deleted and keys that
    /// don't match get nothing (Failed to send at once), a request waits, an ok contact is sent to.
    func testWritingToEachStanding() {
        let expected: [SendPolicy.Contact: SendPolicy.Decision] = [
            .ok: .send, .request: .hold(.notAccepted), .keysDontMatch: .refuse, .blocked: .refuse, .deleted: .refuse,
        ]
        XCTAssertEqual(Set(expected.keys), Set(SendPolicy.Contact.allCases), "every standing is named")
        for (contact, decision) in expected {
            XCTAssertEqual(SendPolicy.decideWriting(to: contact), decision, "\(contact)")
            // The same rule as a message the user writes on a session with the pinned device.
            XCTAssertEqual(SendPolicy.decide(.message(.byHand(askedAt: 0)), to: contact, device: .pinned), decision, "\(contact)")
        }
    }

    /// Links only with a contact nothing is refused or held for.
    func testOnlyAnOkContactIsLinkedWith() {
        for contact in SendPolicy.Contact.allCases {
            XCTAssertEqual(SendPolicy.mayLink(with: contact), contact == .ok, "\(contact)")
        }
    }

    /// Nothing at all goes to a contact that may not be linked with, whatever the frame or device.
    func testNoFrameGoesWhereNoLinkMay() {
        for contact in SendPolicy.Contact.allCases where !SendPolicy.mayLink(with: contact) {
            for device in Self.devices {
                for frame in Self.frames {
                    XCTAssertNotEqual(SendPolicy.decide(frame, to: contact, device: device), .send, "\(contact) \(device) \(frame)")
                }
            }
        }
    }
}
