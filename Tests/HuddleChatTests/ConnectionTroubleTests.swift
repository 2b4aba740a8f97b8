import Testing
@testable import huddle_chat

/// Which connection failures huddle-chat stops on, and which it keeps retrying (a server that
/// is down or restarting must never be given up on).
@Suite struct ConnectionTroubleTests {
    @Test func failuresRetryingCannotFixHaveAHint() throws {
        let untrusted = try #require(ConnectionTrouble(reason: "TLS handshake: error:0A000086:SSL routines::certificate verify failed (unable to get local issuer certificate)"))
        #expect(untrusted.hint.contains("--ca FILE") && untrusted.hint.contains("--insecure"))
        let plainPort = try #require(ConnectionTrouble(reason: "TLS handshake: error:0A00010B:SSL routines::wrong version number"))
        #expect(plainPort.hint.contains("use ws://"))
    }

    @Test func anOutageIsRetried() {
        for reason in [
            "cannot connect to 127.0.0.1:8080: Connection refused", "the server is going away: server shutting down",
            "the connection dropped", "no open connection within 10000 ms (connecting)", "Connection reset by peer",
        ] {
            #expect(ConnectionTrouble(reason: reason) == nil, "\(reason)")
        }
    }

    /// A TLS port resets a plain upgrade, as a restarting server may: only a run of them, on
    /// ws://, before the server was ever reached, is taken for the wrong scheme.
    @Test func aHangUpIsTheWrongSchemeOnlyWhenItRepeats() {
        #expect(ConnectionTrouble.isHangUp("Connection reset by peer"))
        #expect(ConnectionTrouble.isHangUp("the server closed the connection during the upgrade"))
        #expect(!ConnectionTrouble.isHangUp("cannot connect to 127.0.0.1:8080: Connection refused"))
        let enough = ConnectionTrouble.hangUpsForWrongScheme
        #expect(ConnectionTrouble(hangUpsInARow: enough - 1, secure: false) == nil)
        #expect(ConnectionTrouble(hangUpsInARow: enough, secure: true) == nil)
        #expect(ConnectionTrouble(hangUpsInARow: enough, secure: false)?.hint.contains("use wss://") == true)
    }
}
