import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// How wide a terminal is, and how wide text is on it: what `ItemTable` needs to align
/// columns and to cut them to the screen.
enum TerminalWidth {
    /// The columns of the terminal on stdout (TIOCGWINSZ), else `$COLUMNS`; nil when
    /// neither says (a terminal that reports no size).
    static var stdoutColumns: Int? {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = Environment.get("COLUMNS"), let columns = Int(text), columns > 0 { return columns }
        return nil
    }

    /// The cells `text` takes on a terminal: 2 for East Asian wide and emoji characters, 0
    /// for combining marks, 1 for the rest (kc's output has no control characters left).
    static func of(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + cells($1) }
    }

    /// The cells one scalar takes.
    static func cells(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v < 0x300 { return 1 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation { return 2 }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x20000...0x2FFFD, 0x30000...0x3FFFD
        ]
        return wide.contains { $0.contains(v) } ? 2 : 1
    }

    /// `text` cut to at most `width` cells, ending in "…" when cut; whole characters only.
    static func truncated(_ text: String, to width: Int) -> String {
        guard of(text) > width else { return text }
        guard width > 1 else { return width == 1 ? "…" : "" }
        var out = ""
        var used = 0
        for character in text {
            let w = of(String(character))
            if used + w > width - 1 { break }
            out.append(character)
            used += w
        }
        return out + "…"
    }
}
