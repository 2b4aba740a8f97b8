import HuddleIO

/// Opens a connection ready for commands to the endpoint's master: asks Sentinel where the
/// master is (for a Sentinel URL), connects, selects the database, and checks the role. The
/// check matters behind Sentinel: during a failover a Sentinel can still name the old master,
/// now a read-only replica, and writes to it would fail one by one. Loop thread only.
enum RedisConnector {
    static func connect(
        _ endpoint: RedisEndpoint, loop: EventLoop, connectTimeout: Int64, replyTimeout: Int64,
        onClose: @escaping (RedisConnection, RedisError) -> Void,
        completion: @escaping (Result<RedisConnection, RedisError>) -> Void
    ) {
        switch endpoint {
        case .server(let address, let database):
            open(address, database: database, loop: loop, connectTimeout: connectTimeout, replyTimeout: replyTimeout, onClose: onClose, completion: completion)
        case .sentinel(let sentinels, let masterName, let database):
            SentinelQuery.master(named: masterName, sentinels: sentinels, loop: loop, connectTimeout: connectTimeout, replyTimeout: replyTimeout) { result in
                switch result {
                case .success(let address):
                    open(address, database: database, loop: loop, connectTimeout: connectTimeout, replyTimeout: replyTimeout, onClose: onClose, completion: completion)
                case .failure(let error):
                    completion(.failure(error))
                }
            }
        }
    }

    private static func open(
        _ address: RedisAddress, database: Int, loop: EventLoop, connectTimeout: Int64, replyTimeout: Int64,
        onClose: @escaping (RedisConnection, RedisError) -> Void,
        completion: @escaping (Result<RedisConnection, RedisError>) -> Void
    ) {
        var connection: RedisConnection?
        // Connect failures reach the pipelined setup commands below as failed replies.
        connection = RedisConnection(loop: loop, address: address, connectTimeout: connectTimeout, replyTimeout: replyTimeout, onConnect: { _ in }, onClose: { error in
            if let connection { onClose(connection, error) }
        })
        guard let opened = connection else { return }
        var selectFailure: RedisError?
        if database != 0 {
            opened.send(["SELECT", "\(database)"].map { Array($0.utf8) }) { result in
                if case .failure(let error) = result { selectFailure = error }
            }
        }
        opened.send([Array("ROLE".utf8)]) { result in
            let failure: RedisError?
            switch result {
            case .failure(let error):
                failure = error
            case .success(let reply):
                let role = reply.elements?.first?.string ?? "\(reply)"
                failure = selectFailure.map { .connectFailed(address: address.description, reason: "SELECT \(database): \($0)") }
                    ?? (role == "master" ? nil : .connectFailed(address: address.description, reason: "it is a \(role), not the master"))
            }
            if let failure {
                opened.close()
                completion(.failure(failure))
            } else {
                completion(.success(opened))
            }
        }
    }
}
