import Testing
@testable import huddle_chat

/// The interactive client's line editor, fed raw terminal bytes.
@Suite struct LineEditorTests {
    private func typed(_ text: String) -> LineEditor {
        var editor = LineEditor()
        _ = editor.feed(Array(text.utf8))
        return editor
    }

    @Test func printableTextBackspaceAndEnter() {
        var editor = LineEditor()
        #expect(editor.feed(Array("helo".utf8)) == [.changed, .changed, .changed, .changed])
        #expect(editor.feed([0x7F]) == [.changed])
        #expect(editor.feed(Array("lo".utf8)) == [.changed, .changed])
        #expect(editor.feed([0x0D, 0x0A]) == [.submit("hello")], "CR LF is one Enter")
        #expect(editor.isEmpty && editor.cursor == 0)
        #expect(editor.feed([0x7F]).isEmpty, "backspace on an empty line does nothing")
    }

    @Test func multiByteCharactersSplitAcrossReads() {
        var editor = LineEditor()
        let bytes = Array("é☕".utf8)
        for byte in bytes { _ = editor.feed([byte]) }
        #expect(editor.line == "é☕" && editor.cursor == 2)
        _ = editor.feed([0x7F])
        #expect(editor.line == "é", "backspace removes a whole character")
        #expect(editor.feed([0xFF, 0x80]).isEmpty, "bytes that lead nothing are dropped")
        #expect(editor.line == "é")
    }

    @Test func cursorMovesAndEditsInTheMiddle() {
        var editor = typed("helo")
        _ = editor.feed([0x1B, 0x5B, 0x44])  // left
        #expect(editor.cursor == 3)
        _ = editor.feed(Array("l".utf8))
        #expect(editor.line == "hello" && editor.cursor == 4)
        _ = editor.feed([0x01])  // Ctrl-A
        #expect(editor.cursor == 0)
        _ = editor.feed([0x1B, 0x5B, 0x33, 0x7E])  // delete
        #expect(editor.line == "ello")
        _ = editor.feed([0x1B, 0x4F, 0x46])  // End (application mode)
        #expect(editor.cursor == 4)
        _ = editor.feed([0x1B, 0x5B, 0x41])  // up: ignored, consumed whole
        #expect(editor.line == "ello")
    }

    @Test func killAndWordDeletion() {
        var editor = typed("/add bob hello there")
        _ = editor.feed([0x17])  // Ctrl-W
        #expect(editor.line == "/add bob hello ")
        _ = editor.feed([0x17])
        #expect(editor.line == "/add bob ")
        _ = editor.feed([0x15])  // Ctrl-U
        #expect(editor.isEmpty)
    }

    @Test func controlKeys() {
        var editor = LineEditor()
        #expect(editor.feed([0x04]) == [.endOfInput], "Ctrl-D on an empty line ends input")
        editor = typed("x")
        #expect(editor.feed([0x03]) == [.interrupt])
        #expect(editor.feed([0x09, 0x07]).isEmpty, "other control characters never enter the text")
        #expect(editor.line == "x")
    }

    @Test func renderScrollsLongLinesAndPlacesTheCursor() {
        #expect(typed("hi").render(prompt: "> ", columns: 80) == "> hi")
        var editor = typed("hello")
        _ = editor.feed([0x1B, 0x5B, 0x44, 0x1B, 0x5B, 0x44])
        #expect(editor.render(prompt: "> ", columns: 80) == "> hello\u{1B}[2D", "cursor moved back two columns")
        let long = typed(String(repeating: "a", count: 30) + "XYZ")
        // 20 columns: prompt (2) + 17 characters + the cursor's column.
        let shown = long.render(prompt: "> ", columns: 20)
        #expect(shown == "> " + String(repeating: "a", count: 14) + "XYZ", "the end of the line, where the cursor is, stays visible")
    }
}
