/// `kc list`'s lines: one per item, in columns. For a person at a terminal, aligned under a
/// header and cut to the terminal's width; for a pipe or a file, tab-separated with no header
/// and nothing cut (docs/commands.md). Cells hold no control character (`ItemPrinter`
/// quotes text that has one), so no value can break a line or a column.
struct ItemTable {
    /// The column headers, in order.
    static let headers = ["CLASS", "SERVICE", "ACCOUNT", "LABEL", "MODIFIED"]
    /// The columns cut first when the lines are too wide: service, account, label.
    static let shrinkable = [1, 2, 3]
    /// A shrinkable column is not cut below this many cells (nor below its own width).
    static let minimumWidth = 8

    /// The cells of each line, in the order of `headers`.
    var rows: [[String]]

    /// Tab-separated lines, for scripts: no header, nothing cut.
    var tabSeparated: String {
        rows.map { $0.joined(separator: "\t") + "\n" }.joined()
    }

    /// Aligned lines under a header, two spaces between columns, the service, account and
    /// label columns cut (widest first, ending in "…") until a line fits `width` cells;
    /// nothing is cut when `width` is nil.
    func aligned(width: Int?) -> String {
        let all = [Self.headers] + rows
        var widths = Self.headers.indices.map { column in all.map { TerminalWidth.of($0[column]) }.max() ?? 0 }
        if let width {
            var excess = widths.reduce(0, +) + 2 * (widths.count - 1) - width
            while excess > 0 {
                let candidates = Self.shrinkable.filter { widths[$0] > Self.minimumWidth }
                guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
                widths[widest] -= 1
                excess -= 1
            }
        }
        var out = ""
        for row in all {
            var line = ""
            for (column, cell) in row.enumerated() {
                let text = TerminalWidth.truncated(cell, to: widths[column])
                if column == row.count - 1 {
                    line += text
                } else {
                    line += text + String(repeating: " ", count: widths[column] - TerminalWidth.of(text) + 2)
                }
            }
            out += line + "\n"
        }
        return out
    }
}
