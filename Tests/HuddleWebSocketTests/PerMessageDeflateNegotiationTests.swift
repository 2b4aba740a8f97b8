import HuddleWebSocket
import Testing

@Suite struct PerMessageDeflateNegotiationTests {
    /// Options that impose nothing, so a response shows exactly what the offer asked for.
    private static let plainOptions: PerMessageDeflateServerOptions = {
        var options = PerMessageDeflateServerOptions()
        options.serverNoContextTakeover = false
        options.clientNoContextTakeover = false
        return options
    }()

    struct Accepted: Sendable, CustomTestStringConvertible {
        var offers: [String]
        var response: String
        var parameters: PerMessageDeflateParameters
        var testDescription: String { offers.joined(separator: " | ") }
    }

    // MARK: Server: valid offers

    @Test(arguments: [
        Accepted(offers: ["permessage-deflate"], response: "permessage-deflate", parameters: .init()),
        Accepted(
            offers: ["permessage-deflate; client_max_window_bits"], response: "permessage-deflate", parameters: .init()),
        Accepted(
            offers: ["permessage-deflate; client_max_window_bits=10"],
            response: "permessage-deflate; client_max_window_bits=10", parameters: .init(clientMaxWindowBits: 10)),
        Accepted(
            offers: [#"permessage-deflate; client_max_window_bits="10""#],
            response: "permessage-deflate; client_max_window_bits=10", parameters: .init(clientMaxWindowBits: 10)),
        Accepted(
            offers: ["permessage-deflate; server_max_window_bits=10"],
            response: "permessage-deflate; server_max_window_bits=10", parameters: .init(serverMaxWindowBits: 10)),
        Accepted(
            offers: ["permessage-deflate; server_max_window_bits=8"],
            response: "permessage-deflate; server_max_window_bits=8", parameters: .init(serverMaxWindowBits: 8)),
        // An offered limit is accepted by echoing it, even when it is the default.
        Accepted(
            offers: ["permessage-deflate; server_max_window_bits=15"],
            response: "permessage-deflate; server_max_window_bits=15", parameters: .init()),
        Accepted(
            offers: ["permessage-deflate; server_no_context_takeover; client_no_context_takeover"],
            response: "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
            parameters: .init(serverNoContextTakeover: true, clientNoContextTakeover: true)),
        Accepted(
            offers: ["PerMessage-Deflate ;\tServer_No_Context_Takeover ; CLIENT_MAX_WINDOW_BITS = 9 "],
            response: "permessage-deflate; server_no_context_takeover; client_max_window_bits=9",
            parameters: .init(serverNoContextTakeover: true, clientMaxWindowBits: 9)),
        Accepted(
            offers: ["x-webkit-deflate-frame, permessage-deflate; server_max_window_bits=12"],
            response: "permessage-deflate; server_max_window_bits=12", parameters: .init(serverMaxWindowBits: 12)),
        Accepted(
            offers: ["x-webkit-deflate-frame", "permessage-deflate; server_max_window_bits=12"],
            response: "permessage-deflate; server_max_window_bits=12", parameters: .init(serverMaxWindowBits: 12)),
        // The first valid offer wins over later ones.
        Accepted(
            offers: ["permessage-deflate; client_max_window_bits=11, permessage-deflate"],
            response: "permessage-deflate; client_max_window_bits=11", parameters: .init(clientMaxWindowBits: 11)),
        // Empty list elements are allowed by the list syntax.
        Accepted(offers: [" , ,permessage-deflate,"], response: "permessage-deflate", parameters: .init()),
    ])
    func validOfferIsAccepted(_ expected: Accepted) throws {
        let result = try #require(PerMessageDeflateNegotiation.negotiate(offers: expected.offers, options: Self.plainOptions))
        #expect(result.responseHeader == expected.response)
        #expect(result.parameters == expected.parameters)
    }

    // MARK: Server: invalid offers are declined

    @Test(arguments: [
        "permessage-deflate; foo",
        "permessage-deflate; foo=1",
        "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
        "permessage-deflate; client_max_window_bits; client_max_window_bits=10",
        "permessage-deflate; Client_Max_Window_Bits=10; client_max_window_bits=10",
        "permessage-deflate; server_no_context_takeover=1",
        #"permessage-deflate; client_no_context_takeover="""#,
        "permessage-deflate; server_max_window_bits",
        "permessage-deflate; server_max_window_bits=7",
        "permessage-deflate; server_max_window_bits=16",
        "permessage-deflate; server_max_window_bits=08",
        "permessage-deflate; server_max_window_bits=+9",
        "permessage-deflate; server_max_window_bits=abc",
        #"permessage-deflate; server_max_window_bits="""#,
        #"permessage-deflate; server_max_window_bits="1 0""#,
        "permessage-deflate; client_max_window_bits=7",
        "permessage-deflate; client_max_window_bits=16",
        "permessage-deflate; client_max_window_bits=010",
        #"permessage-deflate; client_max_window_bits="10"#,
        "permessage-deflate; =10",
        "permessage-deflate;",
        "permessage-deflate client_max_window_bits",
        "permessage-deflate; client_max_window_bits=10 11",
        "x-webkit-deflate-frame",
        "deflate-frame; permessage-deflate",
        "",
    ])
    func invalidOfferIsDeclined(offer: String) {
        #expect(PerMessageDeflateNegotiation.negotiate(offers: [offer], options: Self.plainOptions) == nil)
    }

    @Test(arguments: [
        ["permessage-deflate; foo, permessage-deflate; client_max_window_bits=12"],
        ["permessage-deflate; server_max_window_bits=20", "permessage-deflate; client_max_window_bits=12"],
        // A comma inside a quoted value does not end the element.
        [#"permessage-deflate; x="a, b", permessage-deflate; client_max_window_bits=12"#],
        [#"permessage-deflate; client_max_window_bits="1\"0, permessage-deflate; x", permessage-deflate; client_max_window_bits=12"#],
    ])
    func invalidOfferIsSkippedForTheNextOne(offers: [String]) throws {
        let result = try #require(PerMessageDeflateNegotiation.negotiate(offers: offers, options: Self.plainOptions))
        #expect(result.parameters == .init(clientMaxWindowBits: 12))
        #expect(result.responseHeader == "permessage-deflate; client_max_window_bits=12")
    }

    @Test func noOfferMeansNoCompression() {
        #expect(PerMessageDeflateNegotiation.negotiate(offers: [], options: .init()) == nil)
        #expect(PerMessageDeflateNegotiation.negotiate(offers: ["", "  "], options: .init()) == nil)
    }

    @Test func disabledServerDeclinesEveryOffer() {
        var options = PerMessageDeflateServerOptions()
        options.enabled = false
        #expect(PerMessageDeflateNegotiation.negotiate(offers: ["permessage-deflate"], options: options) == nil)
    }

    // MARK: Server: options

    @Test func defaultOptionsImposeNoContextTakeoverBothWays() throws {
        let result = try #require(PerMessageDeflateNegotiation.negotiate(offers: ["permessage-deflate"], options: .init()))
        #expect(result.responseHeader == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        #expect(result.parameters == .init(serverNoContextTakeover: true, clientNoContextTakeover: true))
    }

    @Test func serverWindowLimitIsAnnouncedAndTheSmallerSideWins() throws {
        var options = Self.plainOptions
        options.serverMaxWindowBits = 12
        let cases: [(offer: String, bits: Int)] = [
            ("permessage-deflate", 12),
            ("permessage-deflate; server_max_window_bits=10", 10),
            ("permessage-deflate; server_max_window_bits=14", 12),
        ]
        for (offer, bits) in cases {
            let result = try #require(PerMessageDeflateNegotiation.negotiate(offers: [offer], options: options))
            #expect(result.parameters.serverMaxWindowBits == bits, "\(offer)")
            #expect(result.responseHeader == "permessage-deflate; server_max_window_bits=\(bits)", "\(offer)")
        }
    }

    @Test func clientWindowLimitIsSentOnlyToClientsThatOfferedIt() throws {
        var options = Self.plainOptions
        options.clientMaxWindowBits = 11
        let cases: [(offer: String, response: String, bits: Int)] = [
            ("permessage-deflate", "permessage-deflate", 15),
            ("permessage-deflate; client_max_window_bits", "permessage-deflate; client_max_window_bits=11", 11),
            ("permessage-deflate; client_max_window_bits=9", "permessage-deflate; client_max_window_bits=9", 9),
            ("permessage-deflate; client_max_window_bits=13", "permessage-deflate; client_max_window_bits=11", 11),
        ]
        for (offer, response, bits) in cases {
            let result = try #require(PerMessageDeflateNegotiation.negotiate(offers: [offer], options: options))
            #expect(result.parameters.clientMaxWindowBits == bits, "\(offer)")
            #expect(result.responseHeader == response, "\(offer)")
        }
    }

    @Test func outOfRangeOptionsAreClamped() throws {
        var options = Self.plainOptions
        options.serverMaxWindowBits = 3
        options.clientMaxWindowBits = 40
        let result = try #require(
            PerMessageDeflateNegotiation.negotiate(offers: ["permessage-deflate; client_max_window_bits"], options: options))
        #expect(result.parameters == .init(serverMaxWindowBits: 8, clientMaxWindowBits: 15))
        #expect(result.responseHeader == "permessage-deflate; server_max_window_bits=8")
    }

    // MARK: Client

    @Test func clientOfferText() {
        #expect(PerMessageDeflateNegotiation.clientOffer() == "permessage-deflate; client_max_window_bits")
        #expect(PerMessageDeflateNegotiation.clientOffer(clientMaxWindowBits: false) == "permessage-deflate")
        #expect(
            PerMessageDeflateNegotiation.clientOffer(
                clientNoContextTakeover: true, serverNoContextTakeover: true, serverMaxWindowBits: 10)
                == "permessage-deflate; client_no_context_takeover; server_no_context_takeover; server_max_window_bits=10; client_max_window_bits"
        )
    }

    @Test func clientAcceptsWhatItAllowed() throws {
        let offer = PerMessageDeflateClientOffer(serverMaxWindowBits: 12)
        let cases: [(response: [String], parameters: PerMessageDeflateParameters?)] = [
            ([], nil),
            (["permessage-deflate; server_max_window_bits=12"], .init(serverMaxWindowBits: 12)),
            (["permessage-deflate; server_max_window_bits=9"], .init(serverMaxWindowBits: 9)),
            (
                ["permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=12"],
                .init(serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 12)
            ),
            (
                ["Permessage-Deflate; server_max_window_bits=\"12\"; client_max_window_bits=8"],
                .init(serverMaxWindowBits: 12, clientMaxWindowBits: 8)
            ),
        ]
        for (response, parameters) in cases {
            #expect(try PerMessageDeflateNegotiation.acceptServerResponse(headerValues: response, offer: offer) == parameters)
        }
        // Without a window request, the server may still announce its window.
        #expect(
            try PerMessageDeflateNegotiation.acceptServerResponse(
                headerValues: ["permessage-deflate; server_max_window_bits=10"], offer: .init())
                == .init(serverMaxWindowBits: 10))
        // The client's own no-context-takeover promise holds even when the server does not echo it.
        #expect(
            try PerMessageDeflateNegotiation.acceptServerResponse(
                headerValues: ["permessage-deflate"], offer: .init(clientNoContextTakeover: true))
                == .init(clientNoContextTakeover: true))
    }

    @Test(arguments: [
        ["permessage-deflate"],  // the requested server window was not answered
        ["permessage-deflate; server_max_window_bits=13"],  // above the requested 12
        ["permessage-deflate; server_max_window_bits"],
        ["permessage-deflate; server_max_window_bits=12; server_max_window_bits=12"],
        ["permessage-deflate; server_max_window_bits=12; client_max_window_bits"],  // needs a value in a response
        ["permessage-deflate; server_max_window_bits=12; client_max_window_bits=16"],
        ["permessage-deflate; server_max_window_bits=12; server_no_context_takeover=1"],
        ["permessage-deflate; server_max_window_bits=12; foo"],
        ["permessage-deflate; server_max_window_bits=12", "permessage-deflate; server_max_window_bits=12"],
        ["permessage-deflate; server_max_window_bits=12, x-webkit-deflate-frame"],
        ["permessage-deflate; server_max_window_bits=12;"],
    ])
    func clientRejectsWhatItDidNotAllow(response: [String]) {
        let offer = PerMessageDeflateClientOffer(serverMaxWindowBits: 12)
        let error = #expect(throws: WebSocketError.self) {
            try PerMessageDeflateNegotiation.acceptServerResponse(headerValues: response, offer: offer)
        }
        #expect(error?.closeCode == .protocolError)
    }

    @Test func clientRejectsAWindowItDidNotOffer() {
        #expect(throws: WebSocketError.self) {
            try PerMessageDeflateNegotiation.acceptServerResponse(
                headerValues: ["permessage-deflate; client_max_window_bits=10"],
                offer: .init(clientMaxWindowBits: false))
        }
    }

    @Test func serverAnswerToOurClientOfferIsAcceptedWithTheSameParameters() throws {
        var options = PerMessageDeflateServerOptions()
        options.clientMaxWindowBits = 10
        options.serverMaxWindowBits = 13
        let offers = [
            PerMessageDeflateClientOffer(),
            PerMessageDeflateClientOffer(clientMaxWindowBits: false),
            PerMessageDeflateClientOffer(serverNoContextTakeover: true, serverMaxWindowBits: 9),
            PerMessageDeflateClientOffer(clientNoContextTakeover: true, serverMaxWindowBits: 15),
        ]
        for offer in offers {
            for serverOptions in [options, Self.plainOptions] {
                let server = try #require(
                    PerMessageDeflateNegotiation.negotiate(offers: [offer.headerValue], options: serverOptions))
                let client = try PerMessageDeflateNegotiation.acceptServerResponse(
                    headerValues: [server.responseHeader], offer: offer)
                #expect(client == server.parameters, "\(offer.headerValue) -> \(server.responseHeader)")
            }
        }
    }
}
