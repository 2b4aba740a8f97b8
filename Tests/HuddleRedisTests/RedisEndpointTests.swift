import ChildProcessExit
import HuddleRedis
import Testing

@Suite(.ownThread) struct RedisEndpointTests {
    @Test func aPlainURL() throws {
        #expect(try RedisEndpoint(url: "redis://10.0.0.5:6380") == .server(RedisAddress(host: "10.0.0.5", port: 6380), database: 0))
        #expect(try RedisEndpoint(url: "redis://cache.internal:7000/3") == .server(RedisAddress(host: "cache.internal", port: 7000), database: 3))
        #expect(try RedisEndpoint(url: "redis://localhost") == .server(RedisAddress(host: "localhost", port: 6379), database: 0))
        #expect(try RedisEndpoint(url: "redis://localhost:6379/") == .server(RedisAddress(host: "localhost", port: 6379), database: 0))
        #expect(try RedisEndpoint(url: "REDIS://[::1]:6390/2") == .server(RedisAddress(host: "::1", port: 6390), database: 2))
    }

    @Test func aSentinelURL() throws {
        let endpoint = try RedisEndpoint(url: "redis+sentinel://10.0.0.1:26379,10.0.0.2,[fd00::3]:26380/orders")
        let sentinels = [
            RedisAddress(host: "10.0.0.1", port: 26379), RedisAddress(host: "10.0.0.2", port: 26379), RedisAddress(host: "fd00::3", port: 26380),
        ]
        #expect(endpoint == .sentinel(sentinels, masterName: "orders", database: 0))
        #expect(endpoint.description == "redis+sentinel://10.0.0.1:26379,10.0.0.2:26379,[fd00::3]:26380/orders/0")
        #expect(try RedisEndpoint(url: "redis+sentinel://s1:1/m/5").database == 5)
    }

    @Test(arguments: [
        ("", "the Redis URL is empty"),
        ("localhost:6379", "has no scheme"),
        ("http://localhost:6379", "unknown scheme \"http://\""),
        ("rediss://localhost:6379", "rediss:// (Redis over TLS) is not supported"),
        ("redis://", "has no host"),
        ("redis:///0", "has no host"),
        ("redis://:secret@localhost:6379", "credentials in the Redis URL are not supported"),
        ("redis://user:secret@localhost:6379", "credentials in the Redis URL are not supported"),
        ("redis://localhost:0", "\"0\" is not a port (1 to 65535)"),
        ("redis://localhost:65536", "\"65536\" is not a port"),
        ("redis://localhost:+80", "\"+80\" is not a port"),
        ("redis://localhost:http", "\"http\" is not a port"),
        ("redis://localhost:", "\"\" is not a port"),
        ("redis://:6379", "has no host name before the port"),
        ("redis://localhost:6379/-1", "\"-1\" is not a database number"),
        ("redis://localhost:6379/zero", "\"zero\" is not a database number"),
        ("redis://localhost:6379/1/2", "unexpected path after the database"),
        ("redis://localhost:6379?db=1", "take no query"),
        ("redis://a:1,b:2", "several hosts need a Sentinel URL"),
        ("redis://[::1:6379", "lacks its closing ]"),
        ("redis://[::1]6379", "expected :PORT after the IPv6 address"),
        ("redis://local host:6379", "\"local host\" is not a host name"),
        ("redis+sentinel://s1:26379", "names its master after the hosts"),
        ("redis+sentinel://s1:26379/", "names its master after the hosts"),
        ("redis+sentinel://s1:26379,,s2/m", "an empty host in the list"),
        ("redis+sentinel://s1:26379/m/x", "\"x\" is not a database number"),
        ("redis+sentinel://s1:26379/m/1/2", "unexpected path after the database"),
    ])
    func aMalformedURLIsRefusedInPlainWords(url: String, reason: String) {
        #expect {
            try RedisEndpoint(url: url)
        } throws: { error in
            let description = "\(error)"
            return description.hasPrefix("invalid Redis URL: ") && description.contains(reason) && !description.contains("secret")
        }
    }
}
