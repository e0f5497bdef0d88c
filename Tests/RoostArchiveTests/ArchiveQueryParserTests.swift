import Testing
import RoostArchive

@Suite struct ArchiveQueryParserTests {
    func parse(_ text: String) throws -> QueryNode { try QueryParser.parse(text) }

    func error(_ text: String) -> QueryError? {
        do {
            _ = try QueryParser.parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func structure() throws {
        #expect(try parse("") == .all)
        #expect(try parse("   ") == .all)
        #expect(try parse("foo") == .text(TextTerm("foo")))
        #expect(try parse("foo bar") == .and([.text(TextTerm("foo")), .text(TextTerm("bar"))]))
        #expect(try parse("foo AND bar") == .and([.text(TextTerm("foo")), .text(TextTerm("bar"))]))
        #expect(try parse("a b OR c") == .or([.and([.text(TextTerm("a")), .text(TextTerm("b"))]), .text(TextTerm("c"))]))
        #expect(try parse("a (b OR c)") == .and([.text(TextTerm("a")), .or([.text(TextTerm("b")), .text(TextTerm("c"))])]))
        #expect(try parse("-foo") == .not(.text(TextTerm("foo"))))
        #expect(try parse("NOT foo") == .not(.text(TextTerm("foo"))))
        #expect(try parse("e-mail") == .text(TextTerm("e-mail")))
        #expect(try parse("foo*") == .text(TextTerm("foo", isPrefix: true)))
        #expect(try parse("\"good morning\"") == .text(TextTerm("good morning", isPhrase: true)))
        #expect(try parse("or") == .text(TextTerm("or")))
        #expect(try parse("http://example.com") == .text(TextTerm("http://example.com")))
    }

    @Test func filters() throws {
        #expect(try parse("from:bob@example.com") == .filter(.from("bob@example.com")))
        #expect(try parse("from:\"Bob Smith\"") == .filter(.from("Bob Smith")))
        #expect(try parse("FROM:bob") == .filter(.from("bob")))
        #expect(try parse("with:x@y") == .filter(.with("x@y")))
        #expect(try parse("in:room@muc") == .filter(.room("room@muc")))
        #expect(try parse("is:in") == .filter(.direction(.incoming)))
        #expect(try parse("is:out") == .filter(.direction(.outgoing)))
        #expect(try parse("is:chat") == .filter(.kind(.chat)))
        #expect(try parse("is:muc") == .filter(.kind(.groupchat)))
        #expect(try parse("is:groupchat") == .filter(.kind(.groupchat)))
        #expect(try parse("is:edited") == .filter(.edited))
        #expect(try parse("has:file") == .filter(.hasFile))
        let day = DateExpression.absolute(year: 2026, month: 1, day: 1, hour: nil, minute: nil)
        let month = DateExpression.absolute(year: 2026, month: 2, day: nil, hour: nil, minute: nil)
        #expect(try parse("date:2026-01-01..2026-02") == .filter(.date(from: day, through: month)))
        #expect(try parse("date:2026-01-01") == .filter(.date(from: day, through: day)))
        #expect(try parse("date:7d..") == .filter(.date(from: .relative(amount: 7, unit: .day), through: nil)))
        #expect(try parse("date:7d") == .filter(.date(from: .relative(amount: 7, unit: .day), through: nil)))
        #expect(try parse("date:..2w") == .filter(.date(from: nil, through: .relative(amount: 2, unit: .week))))
        #expect(try parse("after:3m before:1y") == .and([.filter(.after(.relative(amount: 3, unit: .month))), .filter(.before(.relative(amount: 1, unit: .year)))]))
        #expect(try parse("after:today") == .filter(.after(.today)))
        #expect(try parse("before:yesterday") == .filter(.before(.yesterday)))
        #expect(try parse("date:2026-01-01T09:30") == .filter(.date(
            from: .absolute(year: 2026, month: 1, day: 1, hour: 9, minute: 30),
            through: .absolute(year: 2026, month: 1, day: 1, hour: 9, minute: 30))))
    }

    @Test func errorPositions() {
        #expect(error("foo \"bar")?.description == "unterminated quote at column 5")
        #expect(error("hello \"x")?.caretDiagram == "hello \"x\n      ^ unterminated quote at column 7")
        #expect(error("a)")?.column == 2)
        #expect(error("(a")?.column == 1)
        #expect(error("()")?.column == 1)
        #expect(error("a OR")?.column == 3)
        #expect(error("OR a")?.column == 1)
        #expect(error("a NOT")?.column == 3)
        #expect(error("*")?.column == 1)
        #expect(error("is:bogus")?.column == 4)
        #expect(error("x date:2026-13")?.column == 8)
        #expect(error("date:2026-01-01..2026-02-30")?.column == 18)
        #expect(error("from:")?.column == 1)
        #expect(error("a\u{0}b")?.column == 2)
        #expect(error("a\u{0}b")?.message.contains("control character") == true)
        #expect(error(String(repeating: "(", count: 100) + "a" + String(repeating: ")", count: 100))?.message == "query nested too deeply")
        #expect(error("\"\"")?.message == "empty phrase")
    }
}
