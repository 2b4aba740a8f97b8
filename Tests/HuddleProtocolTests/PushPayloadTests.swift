import HuddleProtocol
import Testing

/// protocol.md "Notifications and push": the webhook's JSON body.
@Suite struct PushPayloadTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func theBodyHasEveryFieldInOrder() {
        let json = PushPayload.json(
            id: "chat:alice~bob/7", user: "bob", kind: "chat_message", title: "alice", body: "see \"you\"\nat 8?", badge: 3,
            target: "huddle://chat/chat:alice~bob", from: "alice", time: 1763712000123)
        #expect(Self.text(json) == #"{"id":"chat:alice~bob/7","user":"bob","kind":"chat_message","title":"alice","body":"see \"you\"\nat 8?","badge":3,"target":"huddle://chat/chat:alice~bob","from":"alice","time":1763712000123}"#)
    }

    @Test func aChatMessageShowsItsTextOrAGenericLine() {
        #expect(PushPayload.body(ofMessageData: #"{"text":"hi there","n":1}"#) == "hi there")
        #expect(PushPayload.body(ofMessageData: #"{"n":1,"text":"caf\u00e9 \ud83d\ude00"}"#) == "café 😀")
        for data in [#""hi""#, "42", "null", #"{"text":5}"#, #"{"text":""}"#, #"{"text":" \n "}"#, #"[{"text":"x"}]"#, #"{"image":"…"}"#, "{"] {
            #expect(PushPayload.body(ofMessageData: data) == PushPayload.genericMessageBody, "\(data)")
        }
    }

    @Test func longTextIsCutByCharactersAndMarked() {
        let exact = String(repeating: "a", count: PushPayload.maxBodyCharacters)
        #expect(PushPayload.truncated(exact) == exact)
        let long = String(repeating: "👩‍👩‍👧", count: 200)
        let cut = PushPayload.truncated(long)
        #expect(cut.count == PushPayload.maxBodyCharacters)
        #expect(cut.hasSuffix("…") && cut.dropLast().allSatisfy { $0 == "👩‍👩‍👧" }, "no emoji is split")
        let json = Self.text(PushPayload.json(id: "i", user: "u", kind: "k", title: "t", body: long, badge: 0, target: "x", from: "f", time: 0))
        #expect(json.contains(#""body":""# + cut + #"""#))
    }
}
