import HuddleIO

/// Asks Sentinels, in the order given, where the master named `masterName` is
/// (`SENTINEL get-master-addr-by-name`): the first one that names it wins. A Sentinel that is
/// down, does not know the name, or answers oddly is noted and the next one asked, so a client
/// still finds the master while some Sentinels are gone. Loop thread only.
enum SentinelQuery {
    static func master(
        named masterName: String, sentinels: [RedisAddress], loop: EventLoop, connectTimeout: Int64, replyTimeout: Int64,
        completion: @escaping (Result<RedisAddress, RedisError>) -> Void
    ) {
        ask(masterName, sentinels[...], loop: loop, timeouts: (connectTimeout, replyTimeout), answers: [], completion: completion)
    }

    private static func ask(
        _ masterName: String, _ remaining: ArraySlice<RedisAddress>, loop: EventLoop, timeouts: (connect: Int64, reply: Int64), answers: [String],
        completion: @escaping (Result<RedisAddress, RedisError>) -> Void
    ) {
        guard let sentinel = remaining.first else {
            completion(.failure(.noMaster(name: masterName, answers: answers)))
            return
        }
        let connection = RedisConnection(
            loop: loop, address: sentinel, connectTimeout: timeouts.connect, replyTimeout: timeouts.reply, onConnect: { _ in }, onClose: { _ in })
        connection.send(["SENTINEL", "get-master-addr-by-name", masterName].map { Array($0.utf8) }) { result in
            connection.close()
            let answer: String
            switch result {
            case .success(.array(let parts)) where parts.count == 2:
                if let host = parts[0].string, let port = parts[1].string.flatMap({ Int($0) }) {
                    completion(.success(RedisAddress(host: host, port: port)))
                    return
                }
                answer = "\(sentinel): malformed answer \(RedisReply.array(parts))"
            case .success(.null):
                answer = "\(sentinel): does not monitor it"
            case .success(let reply):
                answer = "\(sentinel): unexpected answer \(reply)"
            case .failure(let error):
                answer = "\(error)"
            }
            ask(masterName, remaining.dropFirst(), loop: loop, timeouts: timeouts, answers: answers + [answer], completion: completion)
        }
    }
}
