import Testing
import RoostArchive

/// XEP-0393 spans and blocks, including what must stay plain.
@Suite("Message styling (XEP-0393)")
struct MessageStylingTests {
    func html(_ text: String) -> String { MessageStyling.html(text) { $0.replacingOccurrences(of: "<", with: "&lt;") } }

    @Test func spans() {
        #expect(html("*bold* _it_ ~gone~ `x`") == "<strong>*bold*</strong> <em>_it_</em> <s>~gone~</s> <code>`x`</code>")
        #expect(html("*bold _and it_*") == "<strong>*bold <em>_and it_</em>*</strong>")
        #expect(html("`no *bold* here`") == "<code>`no *bold* here`</code>")
        #expect(html("_*both*_") == "<em>_<strong>*both*</strong>_</em>")
    }

    @Test func whatStaysPlain() {
        for text in ["2 * 3 * 4", "snake_case_name", "* not", "*not *", "**", "a*b*", "*unclosed", "x <b>"] {
            #expect(!html(text).contains("<strong>") && !html(text).contains("<em>"), "\(text)")
        }
        #expect(html("*across\nlines*") == "*across\nlines*", "no span across lines")
    }

    @Test func blocks() {
        #expect(html("> quoted *b*\n>next\nafter") == "<blockquote>quoted <strong>*b*</strong>\nnext</blockquote>\nafter")
        #expect(html("```\n*x*\n```\n*y*") == "<pre>```\n*x*\n```</pre>\n<strong>*y*</strong>")
        #expect(html("```\nunclosed *x*") == "<pre>```\nunclosed *x*</pre>")
        #expect(MessageStyling.terminal("*b*") == "\u{1B}[1m*b*\u{1B}[0m")
    }
}
