import HuddleProtocol
import Testing

/// protocol.md "Feed": the feed ops' arguments, and each refusal's precise message.
@Suite struct FeedRequestDecoderTests {
    static let maxPost = String(repeating: "é", count: 1000)
    static let maxComment = String(repeating: "☕", count: 500)

    static let decoded: [RequestDecoderTests.Decoded] = [
        .init(json: #"{"id":"1","op":"post","text":"hi"}"#, operation: .post(text: "hi", activity: nil, at: nil)),
        .init(json: #"{"id":"1","op":"post","text":"gym?","activity":"Gym","at":1763712000000}"#,
              operation: .post(text: "gym?", activity: "Gym", at: 1_763_712_000_000)),
        .init(json: #"{"id":"1","op":"post","text":"\#(maxPost)","activity":null,"at":null}"#,
              operation: .post(text: maxPost, activity: nil, at: nil)),
        .init(json: #"{"id":"1","op":"post","text":"x","activity":"\#(String(repeating: "a", count: 32))","at":0}"#,
              operation: .post(text: "x", activity: String(repeating: "a", count: 32), at: 0)),
        .init(json: #"{"id":"1","op":"feed"}"#, operation: .feed(before: nil, limit: 10)),
        .init(json: #"{"id":"1","op":"feed","before":42,"limit":50}"#, operation: .feed(before: 42, limit: 50)),
        .init(json: #"{"id":"1","op":"feed","before":null,"limit":null}"#, operation: .feed(before: nil, limit: 10)),
        .init(json: #"{"id":"1","op":"like","post":7}"#, operation: .like(post: 7, liked: nil)),
        .init(json: #"{"id":"1","op":"like","post":7,"liked":false}"#, operation: .like(post: 7, liked: false)),
        .init(json: #"{"id":"1","op":"like","post":7,"liked":true}"#, operation: .like(post: 7, liked: true)),
        .init(json: #"{"id":"1","op":"comment","post":7,"text":"\#(maxComment)"}"#, operation: .comment(post: 7, text: maxComment)),
        .init(json: #"{"id":"1","op":"comments","post":7}"#, operation: .comments(post: 7, before: nil, limit: 10)),
        .init(json: #"{"id":"1","op":"comments","post":7,"before":3,"limit":1}"#, operation: .comments(post: 7, before: 3, limit: 1)),
        .init(json: #"{"id":"1","op":"post_delete","post":7}"#, operation: .postDelete(post: 7)),
    ]

    @Test(arguments: decoded)
    func decodesEveryFeedOp(_ sample: RequestDecoderTests.Decoded) throws {
        let request = try RequestDecoderTests.decode(sample.json).get()
        #expect(request == ClientRequest(id: "1", operation: sample.operation))
        let op = try #require(JSONParser.parse(Array(sample.json.utf8), maxDepth: 32)["op"]?.stringValue)
        #expect(sample.operation.name == op)
    }

    static let refused: [RequestDecoderTests.Refused] = [
        // post.
        .init(#"{"id":"1","op":"post"}"#, "1", "bad_request", "text is required"),
        .init(#"{"id":"1","op":"post","text":5}"#, "1", "bad_request", "text must be a string"),
        .init(#"{"id":"1","op":"post","text":""}"#, "1", "bad_request", "text must be 1 to 1000 characters"),
        .init(#"{"id":"1","op":"post","text":"\#(maxPost)x"}"#, "1", "bad_request", "text must be 1 to 1000 characters"),
        .init(#"{"id":"1","op":"post","text":"t","activity":""}"#, "1", "bad_request", "activity must be 1 to 32 characters"),
        .init(#"{"id":"1","op":"post","text":"t","activity":"\#(String(repeating: "a", count: 33))"}"#,
              "1", "bad_request", "activity must be 1 to 32 characters"),
        .init(#"{"id":"1","op":"post","text":"t","activity":7}"#, "1", "bad_request", "activity must be a string"),
        .init(#"{"id":"1","op":"post","text":"t","at":-1}"#,
              "1", "bad_request", "at must be a time in milliseconds since the Unix epoch (a non-negative integer)"),
        .init(#"{"id":"1","op":"post","text":"t","at":"tomorrow"}"#,
              "1", "bad_request", "at must be a time in milliseconds since the Unix epoch (a non-negative integer)"),
        .init(#"{"id":"1","op":"post","text":"t","at":1.5}"#,
              "1", "bad_request", "at must be a time in milliseconds since the Unix epoch (a non-negative integer)"),
        // feed.
        .init(#"{"id":"1","op":"feed","before":0}"#, "1", "bad_request", "before must be a next_before from an earlier page (a positive integer)"),
        .init(#"{"id":"1","op":"feed","before":"abc"}"#, "1", "bad_request", "before must be a next_before from an earlier page (a positive integer)"),
        .init(#"{"id":"1","op":"feed","before":-4}"#, "1", "bad_request", "before must be a next_before from an earlier page (a positive integer)"),
        .init(#"{"id":"1","op":"feed","limit":0}"#, "1", "bad_request", "limit must be an integer from 1 to 50"),
        .init(#"{"id":"1","op":"feed","limit":51}"#, "1", "bad_request", "limit must be an integer from 1 to 50"),
        // like, comment, comments, post_delete.
        .init(#"{"id":"1","op":"like"}"#, "1", "bad_request", "post is required"),
        .init(#"{"id":"1","op":"like","post":"7"}"#, "1", "bad_request", "post must be a post id (a positive integer)"),
        .init(#"{"id":"1","op":"like","post":0}"#, "1", "bad_request", "post must be a post id (a positive integer)"),
        .init(#"{"id":"1","op":"like","post":null}"#, "1", "bad_request", "post must be a post id (a positive integer)"),
        .init(#"{"id":"1","op":"like","post":7,"liked":"yes"}"#, "1", "bad_request", "liked must be true or false"),
        .init(#"{"id":"1","op":"comment","text":"t"}"#, "1", "bad_request", "post is required"),
        .init(#"{"id":"1","op":"comment","post":7}"#, "1", "bad_request", "text is required"),
        .init(#"{"id":"1","op":"comment","post":7,"text":""}"#, "1", "bad_request", "text must be 1 to 500 characters"),
        .init(#"{"id":"1","op":"comment","post":7,"text":"\#(maxComment)!"}"#, "1", "bad_request", "text must be 1 to 500 characters"),
        .init(#"{"id":"1","op":"comments"}"#, "1", "bad_request", "post is required"),
        .init(#"{"id":"1","op":"comments","post":7,"before":1.0}"#,
              "1", "bad_request", "before must be a next_before from an earlier page (a positive integer)"),
        .init(#"{"id":"1","op":"comments","post":7,"limit":100}"#, "1", "bad_request", "limit must be an integer from 1 to 50"),
        .init(#"{"id":"1","op":"post_delete","post":-7}"#, "1", "bad_request", "post must be a post id (a positive integer)"),
    ]

    @Test(arguments: refused)
    func refusesWithAPreciseError(_ sample: RequestDecoderTests.Refused) {
        #expect(RequestDecoderTests.decode(sample.json) == .failure(sample.error))
    }
}

/// protocol.md "Events": the feed's events byte for byte.
@Suite struct FeedServerMessageTests {
    static func text(_ event: FeedEvent) -> String { JSONWriter.serialize(event.event) }

    static let comment = FeedComment(id: 3, author: "bob", text: "in \"5\"", time: 1763712000500)

    @Test func postEvent() {
        let post = FeedPost(
            id: 12, author: "alice", text: "gym?", activity: "Gym", at: 1763715600000, time: 1763712000000, likes: 0, liked: false,
            comments: 0, recentComments: [])
        #expect(Self.text(.posted(post))
            == #"{"event":"post","post":{"id":12,"author":"alice","text":"gym?","activity":"Gym","at":1763715600000,"time":1763712000000,"likes":0,"liked":false,"comments":0,"recent_comments":[]},"time":1763712000000}"#)
        let plain = FeedPost(
            id: 1, author: "a", text: "t", activity: nil, at: nil, time: 5, likes: 2, liked: true, comments: 1, recentComments: [Self.comment])
        #expect(JSONWriter.serialize(plain.json)
            == #"{"id":1,"author":"a","text":"t","activity":null,"at":null,"time":5,"likes":2,"liked":true,"comments":1,"recent_comments":[{"id":3,"author":"bob","text":"in \"5\"","time":1763712000500}]}"#)
    }

    @Test func likeCommentAndDeletedEvents() {
        #expect(Self.text(.liked(post: 12, author: "alice", user: "bob", liked: false, likes: 0, time: 7))
            == #"{"event":"like","post":12,"author":"alice","user":"bob","liked":false,"likes":0,"time":7}"#)
        #expect(Self.text(.commented(post: 12, author: "alice", comment: Self.comment, comments: 3))
            == #"{"event":"comment","post":12,"author":"alice","comment":{"id":3,"author":"bob","text":"in \"5\"","time":1763712000500},"comments":3,"time":1763712000500}"#)
        #expect(Self.text(.deleted(post: 12, author: "alice", time: 9))
            == #"{"event":"post_deleted","post":12,"author":"alice","time":9}"#)
    }
}
