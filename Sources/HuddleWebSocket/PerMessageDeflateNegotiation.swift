/// RFC 7692 §5 and §7.1: agreeing on permessage-deflate during the opening handshake.
public enum PerMessageDeflateNegotiation {
    static let extensionName = "permessage-deflate"

    // MARK: Server

    /// Server side. `headerValues`: every Sec-WebSocket-Extensions header value of the request (a
    /// header may repeat, a value may list several comma-separated offers). Returns the first
    /// acceptable permessage-deflate offer's agreed parameters plus the response header value
    /// (e.g. "permessage-deflate; server_no_context_takeover"), or nil. Invalid offers (unknown
    /// parameter, duplicate parameter, bad value, value on a valueless parameter, window bits
    /// outside 8...15, broken syntax) are declined — skipped in favour of the next offer — never a
    /// reason to fail the connection (§5: "the server MUST decline" such an offer).
    ///
    /// `server_max_window_bits=8` is accepted. zlib (1.2.9 and later) refuses a raw deflate
    /// stream with an 8-bit window, so `PerMessageDeflater` compresses with zlib's 9-bit window;
    /// zlib never emits a distance above window size − 262 (`MAX_DIST`), i.e. 250 bytes there,
    /// which a peer with a 256-byte window decodes. The RFC asks only that the sender not refer
    /// further back than the agreed window, so this is the agreed behaviour, not an approximation.
    public static func negotiate(
        offers headerValues: [String],
        options: PerMessageDeflateServerOptions
    ) -> (parameters: PerMessageDeflateParameters, responseHeader: String)? {
        guard options.enabled else { return nil }
        for item in WebSocketExtensionHeader.parse(headerValues) {
            guard case .element(let element) = item, element.name == extensionName,
                let offer = Offer(element.parameters)
            else { continue }
            return accept(offer, options: options)
        }
        return nil
    }

    /// What a client's offer asks for, once its parameters are known to be valid.
    private struct Offer {
        var serverNoContextTakeover = false
        var clientNoContextTakeover = false
        var serverMaxWindowBits: Int?
        /// Without it the server must not send `client_max_window_bits` at all.
        var clientMaxWindowBitsOffered = false
        /// The client's own "I will use at most 2^n" (§7.1.2.2); a reply may lower it, not raise it.
        var clientMaxWindowBitsHint: Int?

        init?(_ parameters: [WebSocketExtensionElement.Parameter]) {
            var seen = Set<String>()
            for parameter in parameters {
                guard seen.insert(parameter.name).inserted else { return nil }
                switch (parameter.name, parameter.value) {
                case (ParameterName.serverNoContextTakeover, nil):
                    serverNoContextTakeover = true
                case (ParameterName.clientNoContextTakeover, nil):
                    clientNoContextTakeover = true
                case (ParameterName.serverMaxWindowBits, let value?):
                    guard let bits = windowBits(value) else { return nil }
                    serverMaxWindowBits = bits
                case (ParameterName.clientMaxWindowBits, nil):
                    clientMaxWindowBitsOffered = true
                case (ParameterName.clientMaxWindowBits, let value?):
                    guard let bits = windowBits(value) else { return nil }
                    clientMaxWindowBitsOffered = true
                    clientMaxWindowBitsHint = bits
                default:
                    return nil  // unknown parameter, or a value where none belongs, or none where one must be
                }
            }
        }
    }

    private static func accept(
        _ offer: Offer,
        options: PerMessageDeflateServerOptions
    ) -> (parameters: PerMessageDeflateParameters, responseHeader: String) {
        var parameters = PerMessageDeflateParameters()
        var response = extensionName

        // §7.1.1.1/§7.1.1.2: either side's reset may be imposed by the server even unasked; an
        // offered client_no_context_takeover is echoed so the promise becomes part of the agreement.
        parameters.serverNoContextTakeover = offer.serverNoContextTakeover || options.serverNoContextTakeover
        parameters.clientNoContextTakeover = offer.clientNoContextTakeover || options.clientNoContextTakeover
        if parameters.serverNoContextTakeover { response += "; \(ParameterName.serverNoContextTakeover)" }
        if parameters.clientNoContextTakeover { response += "; \(ParameterName.clientNoContextTakeover)" }

        // §7.1.2.1: an offered limit is accepted by echoing it (or a smaller value); the server may
        // also announce a limit nobody asked for.
        let serverLimit = clamp(options.serverMaxWindowBits)
        parameters.serverMaxWindowBits = min(serverLimit, offer.serverMaxWindowBits ?? 15)
        if offer.serverMaxWindowBits != nil || parameters.serverMaxWindowBits < 15 {
            response += "; \(ParameterName.serverMaxWindowBits)=\(parameters.serverMaxWindowBits)"
        }

        // §7.1.2.2: only to a client that offered the parameter, and no larger than its hint.
        if offer.clientMaxWindowBitsOffered {
            parameters.clientMaxWindowBits = min(clamp(options.clientMaxWindowBits), offer.clientMaxWindowBitsHint ?? 15)
            if parameters.clientMaxWindowBits < 15 {
                response += "; \(ParameterName.clientMaxWindowBits)=\(parameters.clientMaxWindowBits)"
            }
        }
        return (parameters, response)
    }

    private static func clamp(_ windowBits: Int) -> Int { min(max(windowBits, 8), 15) }

    // MARK: Client

    /// Client side: the Sec-WebSocket-Extensions value to send. Same as
    /// `PerMessageDeflateClientOffer(...).headerValue`; keep that offer to check the answer.
    public static func clientOffer(
        clientMaxWindowBits: Bool = true,
        clientNoContextTakeover: Bool = false,
        serverNoContextTakeover: Bool = false,
        serverMaxWindowBits: Int? = nil
    ) -> String {
        PerMessageDeflateClientOffer(
            clientMaxWindowBits: clientMaxWindowBits,
            clientNoContextTakeover: clientNoContextTakeover,
            serverNoContextTakeover: serverNoContextTakeover,
            serverMaxWindowBits: serverMaxWindowBits
        ).headerValue
    }

    /// Client side: checks the server's Sec-WebSocket-Extensions values against `offer`.
    /// Returns `nil` when the server declined (no extension in the response: the connection runs
    /// uncompressed), the agreed parameters when it accepted.
    /// - Throws: `WebSocketError(.protocolError, …)` for an answer the client must fail the
    ///   connection on (§5.1, RFC 6455 §4.1): an extension other than permessage-deflate (the
    ///   client offered nothing else), permessage-deflate twice, broken syntax, an unknown or
    ///   duplicate parameter, a bad value, `client_max_window_bits` without a value or when not
    ///   offered, `server_max_window_bits` above the offered limit or missing when one was offered.
    public static func acceptServerResponse(
        headerValues: [String],
        offer: PerMessageDeflateClientOffer
    ) throws -> PerMessageDeflateParameters? {
        var accepted: PerMessageDeflateParameters?
        for item in WebSocketExtensionHeader.parse(headerValues) {
            guard case .element(let element) = item else {
                throw WebSocketError(.protocolError, "malformed Sec-WebSocket-Extensions in the response")
            }
            guard element.name == extensionName else {
                throw WebSocketError(.protocolError, "server accepted extension \(element.name), which was not offered")
            }
            guard accepted == nil else {
                throw WebSocketError(.protocolError, "server accepted permessage-deflate twice")
            }
            accepted = try parameters(fromResponse: element.parameters, offer: offer)
        }
        return accepted
    }

    private static func parameters(
        fromResponse responseParameters: [WebSocketExtensionElement.Parameter],
        offer: PerMessageDeflateClientOffer
    ) throws -> PerMessageDeflateParameters {
        // The client's own no-context-takeover promise binds its deflater whether echoed or not.
        var parameters = PerMessageDeflateParameters(clientNoContextTakeover: offer.clientNoContextTakeover)
        var seen = Set<String>()
        var serverWindowAnswered = false
        func reject(_ reason: String) -> WebSocketError {
            WebSocketError(.protocolError, "permessage-deflate response: \(reason)")
        }
        for parameter in responseParameters {
            guard seen.insert(parameter.name).inserted else { throw reject("duplicate \(parameter.name)") }
            switch (parameter.name, parameter.value) {
            case (ParameterName.serverNoContextTakeover, nil):
                parameters.serverNoContextTakeover = true
            case (ParameterName.clientNoContextTakeover, nil):
                parameters.clientNoContextTakeover = true
            case (ParameterName.serverMaxWindowBits, let value?):
                guard let bits = windowBits(value) else { throw reject("bad server_max_window_bits") }
                if let limit = offer.serverMaxWindowBits, bits > limit {
                    throw reject("server_max_window_bits \(bits) above the offered \(limit)")
                }
                parameters.serverMaxWindowBits = bits
                serverWindowAnswered = true
            case (ParameterName.clientMaxWindowBits, let value?):
                guard offer.clientMaxWindowBits else { throw reject("client_max_window_bits was not offered") }
                guard let bits = windowBits(value) else { throw reject("bad client_max_window_bits") }
                parameters.clientMaxWindowBits = bits
            default:
                throw reject("unexpected parameter \(parameter.name)\(parameter.value == nil ? "" : "=…")")
            }
        }
        // §7.1.2.1: a server that cannot honour an offered window limit must decline the offer;
        // accepting without the parameter would let it use a window our inflater did not agree to.
        if offer.serverMaxWindowBits != nil, !serverWindowAnswered {
            throw reject("server_max_window_bits was offered but not answered")
        }
        return parameters
    }

    // MARK: Shared

    enum ParameterName {
        static let serverNoContextTakeover = "server_no_context_takeover"
        static let clientNoContextTakeover = "client_no_context_takeover"
        static let serverMaxWindowBits = "server_max_window_bits"
        static let clientMaxWindowBits = "client_max_window_bits"
    }

    /// §7.1.2: "a decimal integer value without leading zeroes between 8 to 15, inclusive".
    static func windowBits(_ value: String) -> Int? {
        switch value {
        case "8": return 8
        case "9": return 9
        case "10": return 10
        case "11": return 11
        case "12": return 12
        case "13": return 13
        case "14": return 14
        case "15": return 15
        default: return nil
        }
    }
}
