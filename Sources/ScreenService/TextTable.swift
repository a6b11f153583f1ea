/// Left-aligned columns two spaces apart, under a header, as `--list-windows` and `screenrelay sessions` print
/// them; the last column is not padded (it may be long: titles, links).
public enum TextTable {
    public static func render(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { column in
                column == row.count - 1 ? row[column] : row[column].padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
