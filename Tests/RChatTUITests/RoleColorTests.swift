import XCTest
import RChatCore
@testable import RChatTUI

/// Colours that read on a light background (xterm's default is white) and on a dark one.
final class RoleColorTests: XCTestCase {
    /// xterm's default palette: the 16 ANSI colours, then the 6×6×6 cube and the greys.
    static func rgb(_ n: Int) -> (Double, Double, Double) {
        let ansi: [UInt32] = [0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
                              0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff]
        if n < 16 {
            let v = ansi[n]
            return (Double(v >> 16), Double((v >> 8) & 0xff), Double(v & 0xff))
        }
        if n < 232 {
            let levels = [0.0, 95, 135, 175, 215, 255]
            let i = n - 16
            return (levels[i / 36], levels[(i / 6) % 6], levels[i % 6])
        }
        let grey = Double(8 + (n - 232) * 10)
        return (grey, grey, grey)
    }

    /// WCAG's contrast ratio between colour `n` and a grey of `background` (0 or 255).
    static func contrast(_ n: Int, against background: Double) -> Double {
        func luminance(_ c: (Double, Double, Double)) -> Double {
            func channel(_ v: Double) -> Double { let s = v / 255; return s <= 0.03928 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4) }
            return 0.2126 * channel(c.0) + 0.7152 * channel(c.1) + 0.0722 * channel(c.2)
        }
        let a = luminance(rgb(n)), b = luminance((background, background, background))
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)
    }

    /// Yellow, cyan and white (and their bright versions): what vanishes on white.
    static let unreadableOnWhite: Set<Int> = [3, 6, 7, 11, 14, 15, 226, 227, 228, 229, 230, 231, 51, 87, 123, 159, 195]

    func testNoRoleHasAColourThatVanishesOnWhiteOrBlack() {
        for colors in [8, 16, 256] {
            for role in ColorRole.allCases {
                guard let color = RoleColors.foreground(role, colors: colors) else { continue }
                XCTAssertLessThan(color, colors, "\(role) with \(colors) colours")
                XCTAssertFalse(Self.unreadableOnWhite.contains(color), "\(role) is yellow, cyan or white (\(color))")
                // Bold text in colours 0–7 is drawn in the bright version (xterm's boldColors).
                for shown in color < 8 ? [color, color + 8] : [color] {
                    for background in [0.0, 255.0] {
                        let ratio = Self.contrast(shown, against: background)
                        XCTAssertGreaterThanOrEqual(ratio, 3.5, "\(role) (colour \(shown)) on \(background == 0 ? "black" : "white"): \(ratio)")
                    }
                }
            }
        }
    }

    func testTheRolesThatWarnStillHaveAColourWhereThereAreEnough() {
        XCTAssertNotNil(RoleColors.foreground(.danger, colors: 8))
        let rich = [ColorRole.accent, .good, .warning, .danger].map { RoleColors.foreground($0, colors: 256) }
        XCTAssertEqual(Set(rich.compactMap { $0 }).count, 4, "four roles, four colours: \(rich)")
        XCTAssertNil(RoleColors.foreground(.normal, colors: 256))
        XCTAssertNil(RoleColors.foreground(.quiet, colors: 256))
        XCTAssertNil(RoleColors.foreground(.danger, colors: 2), "a terminal without colours gets none")
    }

    func testSGRForCellsWrittenAroundCurses() {
        XCTAssertEqual(RoleColors.sgr(1), "31")
        XCTAssertEqual(RoleColors.sgr(130), "38;5;130")
    }

    /// The palette model above is xterm's: the old mapping's yellow on white and blue on
    /// black are below the bar, so the bar means something.
    func testThePaletteModelRejectsWhatTheIssueSaw() {
        XCTAssertLessThan(Self.contrast(3, against: 255), 3.5, "yellow on white")
        XCTAssertLessThan(Self.contrast(6, against: 255), 3.5, "cyan on white")
        XCTAssertLessThan(Self.contrast(4, against: 0), 3.5, "blue on black")
    }
}
