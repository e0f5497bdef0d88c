import Testing
@testable import roost

@Suite("CLI JSON output")
struct CLIParserJSONTests {
    @Test func stringsAreEscapedPerRFC8259() {
        let value: JSONValue = .string("quote \" backslash \\ slash / newline \n tab \t cr \r nul \u{0} bell \u{7} esc \u{1B} del \u{7F}")
        #expect(value.serialized
            == #""quote \" backslash \\ slash / newline \n tab \t cr \r nul \u0000 bell \u0007 esc \u001b del \u007f""#)
        #expect(JSONValue.string("\u{08}\u{0C}").serialized == #""\b\f""#)
    }

    @Test func unicodeStaysReadableExceptLineSeparators() {
        #expect(JSONValue.string("好友 café 👩‍👩‍👧 é").serialized == "\"好友 café 👩‍👩‍👧 é\"")
        #expect(JSONValue.string("a\u{2028}b\u{2029}c").serialized == #""a\u2028b\u2029c""#)
    }

    @Test func objectsKeepInsertionOrderAndReplaceInPlace() {
        var object: JSONObject = ["id": 1, "body": "hi", "edited": false]
        object["body"] = "hello"
        object["subject"] = nil
        object["stanza_id"] = .string(nil)
        #expect(JSONValue.object(object).serialized == #"{"id":1,"body":"hello","edited":false,"stanza_id":null}"#)
        object["edited"] = nil
        #expect(JSONValue.object(object).serialized == #"{"id":1,"body":"hello","stanza_id":null}"#)
    }

    @Test func numbersArraysAndNesting() {
        let value: JSONValue = ["n": -42, "x": 1.5, "nan": .double(.nan), "list": [1, "two", nil, true], "empty": [:]]
        #expect(value.serialized == #"{"n":-42,"x":1.5,"nan":null,"list":[1,"two",null,true],"empty":{}}"#)
        #expect(JSONValue.int(Int64.max).serialized == "9223372036854775807")
    }

    @Test func outputWritesOneObjectPerLine() {
        let captured = CapturedText()
        let output = Output(standardOutput: captured, standardError: captured, standardOutputIsTTY: false, standardErrorIsTTY: false)
        output.jsonLine(["body": "line one\nline two"])
        output.jsonLine(["body": "second"])
        #expect(captured.text == "{\"body\":\"line one\\nline two\"}\n{\"body\":\"second\"}\n")
    }
}
