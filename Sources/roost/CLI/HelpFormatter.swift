import RoostCore

/// Builds help pages from the command descriptions, with the option column aligned across sections
/// and long descriptions wrapped under their column.
struct HelpFormatter {
    let commands: [any Command.Type]
    var width = 80

    func rootHelp() -> String {
        var text = "roost \(RoostVersion.string) — a headless XMPP agent that archives your chats\n\n"
        text += "Usage: roost [global options] COMMAND [options] [ARGUMENTS]\n"
        let commandRows = commands.map { (left: $0.name, right: $0.summary) }
            + [(left: "help", right: "show help for a command")]
        let optionRows = GlobalOptions.specs.map { (left: $0.synopsis, right: $0.help) }
        let column = leftColumnWidth(commandRows + optionRows)
        text += section("Commands", commandRows, column: column)
        text += section("Global options", optionRows, column: column)
        text += "\nRun `roost help COMMAND` or `roost COMMAND --help` for a command's options.\n"
        return text
    }

    func help(for command: any Command.Type) -> String {
        var text = "roost \(command.name) — \(command.summary)\n\n"
        let usage = command.usage.isEmpty ? "" : " \(command.usage)"
        text += "Usage: roost \(command.name)\(usage)\n"
        if !command.discussion.isEmpty {
            text += "\n" + wrap(command.discussion, indent: 0) + "\n"
        }
        let optionRows = command.options.map { (left: $0.synopsis, right: $0.help) }
        let globalRows = GlobalOptions.specs.map { (left: $0.synopsis, right: $0.help) }
        let column = leftColumnWidth(optionRows + globalRows)
        if !optionRows.isEmpty {
            text += section("Options", optionRows, column: column)
        }
        text += section("Global options", globalRows, column: column)
        return text
    }

    /// `roost help help`.
    func helpForHelp() -> String {
        """
        roost help — show help for a command

        Usage: roost help [COMMAND]

        Without COMMAND, lists the commands and the global options; with one, shows that command's usage,
        description and options (the same as `roost COMMAND --help`). The manual page, man roost, has it all.

        """
    }

    private func leftColumnWidth(_ rows: [(left: String, right: String)]) -> Int {
        rows.map(\.left.count).max() ?? 0
    }

    private func section(_ title: String, _ rows: [(left: String, right: String)], column: Int) -> String {
        var text = "\n\(title):\n"
        for row in rows {
            let padded = "  " + row.left + String(repeating: " ", count: column - row.left.count) + "  "
            text += padded + wrap(row.right, indent: padded.count).dropFirst(padded.count) + "\n"
        }
        return text
    }

    /// Word-wraps paragraphs to `width`, every line indented by `indent` spaces.
    private func wrap(_ paragraphs: String, indent: Int) -> String {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        for paragraph in paragraphs.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = margin
            for word in paragraph.split(separator: " ") {
                if line.count > indent && line.count + 1 + word.count > width {
                    lines.append(line)
                    line = margin
                }
                line += (line.count > indent ? " " : "") + word
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
