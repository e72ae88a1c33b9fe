import CWidth
import Glibc

/// Columns of captured or printed text as the C library counts them (`wcswidth` in a
/// UTF-8 locale): what ncurses and tmux 3.3 place characters by. A tmux row captured with
/// its trailing spaces (`capture-pane -N`) has exactly the pane's width by this count
/// only if every cell tmux drew is as wide as the C library says.
func cColumns(_ text: some StringProtocol) -> Int {
    let locale = newlocale(Int32(LC_CTYPE_MASK), "C.UTF-8", nil)
    defer { if let locale { freelocale(locale) } }
    let scalars = String(text).unicodeScalars.map(\.value)
    return Int(scalars.withUnsafeBufferPointer { rchat_wcswidth_in(locale, $0.baseAddress, $0.count) })
}
