@testable import HuddleProtocol
import Testing

/// The fast path for plain publishes (`PublishRequestDecoder`) may only take what the general
/// decoder accepts, and must decode it the same; everything else it leaves to the general
/// decoder, which makes every error reply.
@Suite struct PublishRequestDecoderTests {
    static let limits = ProtocolLimits()

    static func fast(_ text: String, limits: ProtocolLimits = limits) -> ClientRequest? {
        Array(text.utf8).withUnsafeBytes { PublishRequestDecoder.decode($0, limits: limits) }
    }

    static func general(_ bytes: [UInt8], limits: ProtocolLimits = limits) -> Result<ClientRequest, RequestError> {
        bytes.withUnsafeBytes { RequestDecoder.decodeGenerally($0, limits: limits) }
    }

    static let plainPublishes: [String] = [
        #"{"id":"1","op":"publish","channel":"room:aw1_0","data":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#,
        #"{"op":"publish","id":"7","data":{"text":"hi","n":[1,2.5e3,null,true]},"channel":"chat:alice~bob"}"#,
        #" { "id" : "a b" , "op" : "publish" , "channel" : "room:x" , "data" : [ 1 , { } ] } "#,
        #"{"id":"2","op":"publish","channel":"room:x","type":"chat.message_2","data":null}"#,
        #"{"id":"3","op":"publish","channel":"room:x","data":0,"client_id":"c-1"}"#,
        #"{"id":"4","op":"publish","channel":"room:x","data":"q\"uote\\ \u00e9 \ud83d\ude00","extra":{"k":[1]},"n":-0.5}"#,
        #"{"id":"\u00e9t\u00e9","op":"publish","channel":"room:\u0078","data":"é😀"}"#,
        #"{"id":"5","op":"publish","channel":"room:x","data":"\/","since":null,"flag":false}"#,
        "{\"id\":\"6\",\n\t\"op\":\"publish\",\r\n\"channel\":\"\",\"data\":\"\"}",
    ]

    @Test(arguments: plainPublishes)
    func aPlainPublishIsReadWithoutTheGeneralTreeAndAsTheGeneralDecoderReadsIt(_ text: String) throws {
        let fast = try #require(Self.fast(text))
        #expect(Self.general(Array(text.utf8)) == .success(fast))
        #expect(RequestDecoder.decode(Array(text.utf8), limits: Self.limits) == .success(fast))
    }

    static let leftToTheGeneralDecoder: [String] = [
        #"{"id":"1","op":"ping"}"#,
        #"{"id":"1","op":"subscribe","channel":"room:x"}"#,
        #"{"\u0069d":"1","op":"publish","channel":"room:x","data":1}"#,
        #"{"id":"1","op":"pub\u006cish","channel":"room:x","data":1}"#,
        #"{"id":"1","id":"2","op":"publish","channel":"room:x","data":1}"#,
        #"{"id":"1","op":"publish","channel":"room:x","data":1,"data":2}"#,
        #"{"id":"1","op":"publish","op":"publish","channel":"room:x","data":1}"#,
        #"{"id":"1","op":"publish","channel":"room:x","channel":"room:y","data":1}"#,
        #"{"id":"1","op":"publish","channel":"room:x","type":null,"data":1}"#,
        #"{"id":"1","op":"publish","channel":"room:x","client_id":null,"data":1}"#,
        #"{"id":"1","op":"publish","channel":7,"data":1}"#,
        #"{"id":1,"op":"publish","channel":"room:x","data":1}"#,
        #"{"id":"","op":"publish","channel":"room:x","data":1}"#,
        #"{"id":"1","op":"publish","channel":"room:x","type":"Bad","data":1}"#,
        #"{"id":"1","op":"publish","channel":"room:x","type":"","data":1}"#,
        #"{"id":"1","op":"publish","channel":"room:x","client_id":"","data":1}"#,
        #"{"id":"1","op":"publish","channel":"room:x"}"#,
        #"{"id":"1","channel":"room:x","data":1}"#,
        #"{"op":"publish","channel":"room:x","data":1}"#,
        #"{"id":"1","op":"publish","channel":"room:x","data":1,}"#,
        #"{"id":"1","op":"publish","channel":"room:x","data":1}x"#,
        #"{"id":"1","op":"publish","channel":"room:x","data":01}"#,
        "{\"id\":\"1\",\"op\":\"publish\",\"channel\":\"room:x\",\"data\":\"\u{01}\"}",
        #"{"id":"1","op":"publish","channel":"room:x","data":"\x"}"#,
        #"{"id":"1","op":"publish","channel":"room:x","data":1"#,
        #"[{"id":"1","op":"publish","channel":"room:x","data":1}]"#,
        #"{}"#,
        "",
    ]

    @Test(arguments: leftToTheGeneralDecoder)
    func anythingElseIsLeftToTheGeneralDecoder(_ text: String) {
        #expect(Self.fast(text) == nil)
        #expect(RequestDecoder.decode(Array(text.utf8), limits: Self.limits) == Self.general(Array(text.utf8)))
    }

    @Test func theLimitsAreTheGeneralDecoders() {
        var small = ProtocolLimits()
        small.maxDataBytes = 4
        small.maxIDLength = 3
        #expect(Self.fast(#"{"id":"1","op":"publish","channel":"x","data":"ab"}"#, limits: small) != nil)
        #expect(Self.fast(#"{"id":"1","op":"publish","channel":"x","data":"abc"}"#, limits: small) == nil)  // 5 bytes serialized
        #expect(Self.fast(#"{"id":"1234","op":"publish","channel":"x","data":1}"#, limits: small) == nil)
        #expect(Self.fast(#"{"id":"1","op":"publish","channel":"x","data":1,"client_id":"abcd"}"#, limits: small) == nil)
        small.maxDepth = 2
        #expect(Self.fast(#"{"id":"1","op":"publish","channel":"x","data":[1]}"#, limits: small) != nil)
        #expect(Self.fast(#"{"id":"1","op":"publish","channel":"x","data":[[1]]}"#, limits: small) == nil)
        #expect(Self.fast(#"{"id":"1","op":"publish","channel":"x","data":1,"e":[[1]]}"#, limits: small) == nil)
        small.maxDepth = 0
        #expect(Self.fast(#"{"id":"1","op":"publish","channel":"x","data":1}"#, limits: small) == nil)
    }

    /// Plain publishes cut, spliced and garbled at random: whatever the fast path still takes
    /// must be what the general decoder makes of the same bytes.
    @Test func whatTheFastPathTakesFromGarbledRequestsTheGeneralDecoderAccepts() {
        var generator = SplitMix64(seed: 15)
        let alphabet = Array(#"{}[],:"\ u0e1ab-.9 idopchneltyaubsfrx"#.utf8) + [0x00, 0x1F, 0xC3, 0xA9, 0xFF]
        var taken = 0
        for round in 0..<4000 {
            var bytes = Array(Self.plainPublishes[round % Self.plainPublishes.count].utf8)
            for _ in 0...(generator.next() % 3) {
                let at = Int(generator.next() % UInt64(bytes.count + 1))
                switch generator.next() % 4 {
                case 0 where at < bytes.count: bytes.remove(at: at)
                case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: at)
                case 2 where at < bytes.count: bytes[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                default:
                    let end = min(bytes.count, at + Int(generator.next() % 12))
                    bytes.insert(contentsOf: bytes[at..<end], at: at)
                }
            }
            guard let fast = bytes.withUnsafeBytes({ PublishRequestDecoder.decode($0, limits: Self.limits) }) else { continue }
            taken += 1
            #expect(Self.general(bytes) == .success(fast), "\(String(decoding: bytes, as: UTF8.self))")
        }
        // Some garbling leaves a valid publish (a changed data character, extra whitespace):
        // the comparison above must have had cases to compare.
        #expect(taken > 100)
    }
}
