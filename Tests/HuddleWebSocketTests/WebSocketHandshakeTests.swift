import Foundation
import HuddleWebSocket
import Testing

private func head(_ text: String) throws -> HTTPRequestHead {
    var parser = HTTPHeadParser()
    let bytes = Array(text.utf8)
    return try #require(try bytes.withUnsafeBytes { try parser.parseRequest($0) }).head
}

private func responseHead(_ bytes: [UInt8]) throws -> HTTPResponseHead {
    var parser = HTTPHeadParser()
    let (head, consumed) = try #require(try bytes.withUnsafeBytes { try parser.parseResponse($0) })
    #expect(consumed == bytes.count)
    return head
}

/// A valid upgrade request with fields replaced (value nil removes the field) or added.
private func upgradeRequest(
    requestLine: String = "GET /ws HTTP/1.1",
    replacing: [String: String?] = [:],
    adding: [String] = []
) -> String {
    let fields: [(String, String)] = [
        ("Host", "huddle.example"),
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Version", "13"),
    ]
    var text = requestLine + "\r\n"
    for (name, value) in fields {
        if let replacement = replacing[name] {
            if let replacement { text += "\(name): \(replacement)\r\n" }
        } else {
            text += "\(name): \(value)\r\n"
        }
    }
    for line in adding { text += line + "\r\n" }
    return text + "\r\n"
}

private func rejection(_ text: String) throws -> (status: Int, headers: [(String, String)])? {
    switch WebSocketHandshake.validate(try head(text)) {
    case .upgrade:
        return nil
    case let .reject(status, headers, reason):
        #expect(!reason.isEmpty)
        return (status, headers)
    }
}

private func accepted(_ text: String) throws -> WebSocketHandshake.Request? {
    if case let .upgrade(request) = WebSocketHandshake.validate(try head(text)) { return request }
    return nil
}

@Suite struct WebSocketHandshakeTests {
    /// RFC 6455 §1.3 gives the digest as b3 7a 4f 2c c0 62 4f 16 90 f6 46 06 cf 38 59 45 b2 be c4 ea,
    /// base64 "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
    @Test func acceptValueOfTheRFCExample() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        // The pair Wikipedia's WebSocket article and many client test suites use.
        #expect(WebSocketHandshake.acceptValue(forKey: "x3JJHMbDL1EzLkh9GBhXDw==") == "HSmrc0sMlYUkAGmm5OPpG2HaGWk=")
    }

    @Test func rfcExampleIsAnUpgrade() throws {
        let request = try #require(try accepted(rfcRequest))
        #expect(request.key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(request.subprotocols == ["chat", "superchat"])
        #expect(request.extensionOffers == [])
        #expect(request.head.path == "/chat")
    }

    @Test func browserRequestsAreUpgrades() throws {
        let chrome = try #require(try accepted(chromeRequest))
        #expect(chrome.extensionOffers == ["permessage-deflate; client_max_window_bits"])
        #expect(chrome.subprotocols == [])
        #expect(chrome.head.query == "room=alice%2Bbob")

        let firefox = """
            GET /ws HTTP/1.1\r
            Host: localhost:8080\r
            User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0\r
            Accept: */*\r
            Accept-Language: en-US,en;q=0.5\r
            Accept-Encoding: gzip, deflate, br, zstd\r
            Sec-WebSocket-Version: 13\r
            Origin: http://localhost:8080\r
            Sec-WebSocket-Extensions: permessage-deflate\r
            Sec-WebSocket-Key: Hq7hJ2gWPdE5yYzNL0ixAw==\r
            Connection: keep-alive, Upgrade\r
            Sec-Fetch-Dest: empty\r
            Sec-Fetch-Mode: websocket\r
            Sec-Fetch-Site: same-origin\r
            Pragma: no-cache\r
            Cache-Control: no-cache\r
            Upgrade: websocket\r
            \r

            """
        let request = try #require(try accepted(firefox))
        #expect(request.extensionOffers == ["permessage-deflate"])
        #expect(request.key == "Hq7hJ2gWPdE5yYzNL0ixAw==")
    }

    @Test func tokensAreCaseInsensitiveListsAcrossFields() throws {
        #expect(try accepted(upgradeRequest(replacing: ["Upgrade": "WebSocket", "Connection": "keep-alive, UPGRADE"])) != nil)
        #expect(try accepted(upgradeRequest(replacing: ["Upgrade": "h2c, websocket"])) != nil)
        #expect(try accepted(upgradeRequest(replacing: ["Connection": "keep-alive"], adding: ["Connection: upgrade"])) != nil)
        #expect(try accepted(upgradeRequest(requestLine: "GET /ws HTTP/1.2")) != nil)
        #expect(try accepted(upgradeRequest(adding: ["Content-Length: 0"])) != nil)
    }

    @Test func extensionOffersAcrossFieldsAndSubprotocolsKeepCase() throws {
        let request = try #require(try accepted(upgradeRequest(adding: [
            "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_max_window_bits=10, permessage-deflate",
            "Sec-WebSocket-Extensions: x-webkit-deflate-frame",
            "Sec-WebSocket-Protocol: Huddle.v1, huddle.v0",
        ])))
        #expect(request.extensionOffers == [
            "permessage-deflate; server_no_context_takeover; client_max_window_bits=10", "permessage-deflate", "x-webkit-deflate-frame",
        ])
        #expect(request.subprotocols == ["Huddle.v1", "huddle.v0"])
    }

    @Test func methodOtherThanGetIs405WithAllow() throws {
        for method in ["POST", "PUT", "get", "HEAD"] {
            let (status, headers) = try #require(try rejection(upgradeRequest(requestLine: "\(method) /ws HTTP/1.1")))
            #expect(status == 405, "\(method)")
            #expect(headers.contains { $0 == ("Allow", "GET") })
        }
    }

    @Test func versionRules() throws {
        #expect(try rejection(upgradeRequest(requestLine: "GET /ws HTTP/1.0"))?.status == 400)
        let http2 = HTTPRequestHead(method: "GET", target: "/ws", versionMajor: 2, versionMinor: 0, headers: try head(upgradeRequest()).headers)
        guard case let .reject(status, _, _) = WebSocketHandshake.validate(http2) else {
            Issue.record("HTTP/2 head accepted")
            return
        }
        #expect(status == 505)
    }

    @Test func hostMustAppearOnce() throws {
        #expect(try rejection(upgradeRequest(replacing: ["Host": nil]))?.status == 400)
        #expect(try rejection(upgradeRequest(replacing: ["Host": ""]))?.status == 400)
        #expect(try rejection(upgradeRequest(adding: ["Host: other.example"]))?.status == 400)
    }

    @Test func upgradeAndConnectionTokensAreRequired() throws {
        for replacing: [String: String?] in [
            ["Upgrade": nil], ["Upgrade": "h2c"], ["Upgrade": "websockets"], ["Upgrade": ""],
            ["Connection": nil], ["Connection": "keep-alive"], ["Connection": "upgrades"], ["Connection": "close"],
        ] {
            #expect(try rejection(upgradeRequest(replacing: replacing))?.status == 400, "\(replacing)")
        }
    }

    @Test func wrongWebSocketVersionIs426NamingThirteen() throws {
        for replacing: [String: String?] in [
            ["Sec-WebSocket-Version": nil], ["Sec-WebSocket-Version": "8"], ["Sec-WebSocket-Version": "13, 8"],
            ["Sec-WebSocket-Version": "013"], ["Sec-WebSocket-Version": ""],
        ] {
            let (status, headers) = try #require(try rejection(upgradeRequest(replacing: replacing)), "\(replacing)")
            #expect(status == 426, "\(replacing)")
            #expect(headers.contains { $0 == ("Sec-WebSocket-Version", "13") })
        }
        let repeated = try #require(try rejection(upgradeRequest(adding: ["Sec-WebSocket-Version: 13"])))
        #expect(repeated.status == 426)
    }

    @Test func keyMustBeOneBase64SixteenByteNonce() throws {
        for replacing: [String: String?] in [
            ["Sec-WebSocket-Key": nil],
            ["Sec-WebSocket-Key": ""],
            ["Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ"],  // unpadded
            ["Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZ=="],  // length not a multiple of 4
            ["Sec-WebSocket-Key": "AAAAAAAAAAAAAAAAAAAA"],  // 15 bytes
            ["Sec-WebSocket-Key": "AAAAAAAAAAAAAAAAAAAAAAAA"],  // 18 bytes
            ["Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZ-=="],  // URL-safe alphabet
            ["Sec-WebSocket-Key": "a-key-that-is-not-base64"],
        ] {
            #expect(try rejection(upgradeRequest(replacing: replacing))?.status == 400, "\(replacing)")
        }
        #expect(try rejection(upgradeRequest(adding: ["Sec-WebSocket-Key: x3JJHMbDL1EzLkh9GBhXDw=="]))?.status == 400)
        #expect(try accepted(upgradeRequest(replacing: ["Sec-WebSocket-Key": "AAAAAAAAAAAAAAAAAAAAAA=="])) != nil)
    }

    @Test func upgradeWithABodyIs400() throws {
        for field in ["Content-Length: 5", "Content-Length: abc", "Content-Length: ", "Transfer-Encoding: chunked", "Transfer-Encoding: identity"] {
            #expect(try rejection(upgradeRequest(adding: [field]))?.status == 400, "\(field)")
        }
    }

    @Test func plainRequestsAreToldApartFromUpgrades() throws {
        #expect(!WebSocketHandshake.isUpgradeRequest(try head("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")))
        #expect(!WebSocketHandshake.isUpgradeRequest(try head("GET /healthz HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n")))
        #expect(WebSocketHandshake.isUpgradeRequest(try head("GET /ws HTTP/1.1\r\nUpgrade: WebSocket\r\n\r\n")))
        #expect(WebSocketHandshake.isUpgradeRequest(try head(rfcRequest)))
    }

    @Test func upgradeResponseOfTheRFCExample() throws {
        let bytes = WebSocketHandshake.upgradeResponse(key: "dGhlIHNhbXBsZSBub25jZQ==", extensionHeader: nil, subprotocol: "chat")
        #expect(String(decoding: bytes, as: UTF8.self) == """
            HTTP/1.1 101 Switching Protocols\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
            Sec-WebSocket-Protocol: chat\r
            \r

            """)
        let plain = WebSocketHandshake.upgradeResponse(key: "dGhlIHNhbXBsZSBub25jZQ==", extensionHeader: "permessage-deflate; server_no_context_takeover", subprotocol: nil)
        #expect(String(decoding: plain, as: UTF8.self) == """
            HTTP/1.1 101 Switching Protocols\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
            Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r
            \r

            """)
    }

    @Test func makeKeyIsAFreshSixteenByteNonce() {
        let keys = (0..<8).map { _ in WebSocketHandshake.makeKey() }
        for key in keys {
            #expect(key.utf8.count == 24)
            #expect(Base64.decode(key)?.count == 16)
        }
        #expect(Set(keys).count == keys.count)
    }

    @Test func clientRequestPassesServerValidation() throws {
        let key = WebSocketHandshake.makeKey()
        let bytes = WebSocketHandshake.clientRequest(
            host: "huddle.example:443",
            path: "/ws?resume=42",
            key: key,
            extensionOffer: "permessage-deflate; client_max_window_bits",
            subprotocols: ["huddle.v1", "huddle.v0"],
            extraHeaders: [("Authorization", "Bearer t0k3n"), ("Origin", "https://huddle.example")]
        )
        let request = try #require(try accepted(String(decoding: bytes, as: UTF8.self)))
        #expect(request.key == key)
        #expect(request.head.target == "/ws?resume=42")
        #expect(request.head.headers[first: "host"] == "huddle.example:443")
        #expect(request.extensionOffers == ["permessage-deflate; client_max_window_bits"])
        #expect(request.subprotocols == ["huddle.v1", "huddle.v0"])
        #expect(request.head.headers[first: "authorization"] == "Bearer t0k3n")

        let minimal = WebSocketHandshake.clientRequest(host: "h", path: "", key: key, extensionOffer: nil, subprotocols: [], extraHeaders: [])
        #expect(String(decoding: minimal, as: UTF8.self) == "GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
    }

    @Test func serverResponseRoundTrip() throws {
        let key = WebSocketHandshake.makeKey()
        let bytes = WebSocketHandshake.upgradeResponse(key: key, extensionHeader: "permessage-deflate; client_max_window_bits=12", subprotocol: "huddle.v1")
        let negotiated = try WebSocketHandshake.validateServerResponse(try responseHead(bytes), key: key, offeredSubprotocols: ["huddle.v1"])
        #expect(negotiated.extensions == ["permessage-deflate; client_max_window_bits=12"])
        #expect(negotiated.subprotocol == "huddle.v1")

        let bare = WebSocketHandshake.upgradeResponse(key: key, extensionHeader: nil, subprotocol: nil)
        let none = try WebSocketHandshake.validateServerResponse(try responseHead(bare), key: key)
        #expect(none.extensions == [] && none.subprotocol == nil)
    }

    @Test func refusedUpgradeCarriesTheServersStatus() throws {
        let refused = HTTPResponseWriter.response(status: 503, headers: [("Retry-After", "5")])
        let error = #expect(throws: HTTPParseError.self) {
            try WebSocketHandshake.validateServerResponse(try responseHead(refused), key: "dGhlIHNhbXBsZSBub25jZQ==")
        }
        #expect(error?.status == 503)
    }

    @Test func invalidSwitchIsAnError101() throws {
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        let good = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        for fields in [
            ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: "x3JJHMbDL1EzLkh9GBhXDw=="))"],
            ["Upgrade: websocket", "Connection: Upgrade"],
            ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: \(good)", "Sec-WebSocket-Accept: \(good)"],
            ["Connection: Upgrade", "Sec-WebSocket-Accept: \(good)"],
            ["Upgrade: websocket", "Sec-WebSocket-Accept: \(good)"],
            ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: \(good)", "Sec-WebSocket-Protocol: superchat"],
            ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: \(good)", "Sec-WebSocket-Protocol: chat, superchat"],
            ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: \(good)", "Sec-WebSocket-Protocol: Chat"],
        ] {
            let text = "HTTP/1.1 101 Switching Protocols\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
            let error = #expect(throws: HTTPParseError.self, "\(fields)") {
                try WebSocketHandshake.validateServerResponse(try responseHead(Array(text.utf8)), key: key, offeredSubprotocols: ["chat"])
            }
            #expect(error?.status == 101)
        }
        let lenient = "HTTP/1.1 101 Switching Protocols\r\nupgrade: WebSocket\r\nconnection: keep-alive, upgrade\r\nsec-websocket-accept: \(good)\r\nSec-WebSocket-Protocol: chat\r\n\r\n"
        let negotiated = try WebSocketHandshake.validateServerResponse(try responseHead(Array(lenient.utf8)), key: key, offeredSubprotocols: ["chat"])
        #expect(negotiated.subprotocol == "chat")
    }
}

@Suite struct Base64Tests {
    @Test func rfc4648Vectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test func roundTripsAgreeWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let encoded = Base64.encode(bytes)
            #expect(encoded == Data(bytes).base64EncodedString())
            #expect(Base64.decode(encoded) == bytes)
        }
        let everyByte = (0...255).map(UInt8.init)
        #expect(Base64.decode(Base64.encode(everyByte)) == everyByte)
        #expect(Base64.decode(Base64.encode(everyByte)[...]) == everyByte)
    }

    @Test func rejectsNonCanonicalText() {
        for text in ["Zg=", "Zg", "Zg=a", "Z===", "====", "Zg==Zg==", "Zm9v\n", " Zm9v", "Zm-v", "Zm_v", "Zm9v=", "Zm9\u{E9}"] {
            #expect(Base64.decode(text) == nil, "\(text.debugDescription)")
        }
    }
}
