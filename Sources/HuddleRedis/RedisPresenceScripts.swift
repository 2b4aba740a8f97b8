/// The Lua scripts of `RedisPresenceRegistry`, each atomic in Redis, so that a node's set, its
/// change sequence and the message telling of a change move together. ARGV[1] is the key
/// prefix, ARGV[2] the node; keys are derived from them: `<prefix>node:<node>` (the lease,
/// holding the node's boot nonce), `<prefix>online:<node>` (its online users),
/// `<prefix>presence-seq:<node>` (its change counter, never deleted, so sequences keep
/// increasing across the node's deaths; one small key per node name ever used),
/// `<prefix>nodes` (the names) and the channel `<prefix>presence` (`PresenceMessage`). A
/// Redis Cluster would need the keys declared; cluster mode uses one Redis (with Sentinel).
enum RedisPresenceScripts {
    /// ARGV[3]: '+' or '-', ARGV[4]: the user. Returns the change's sequence, 0 if none.
    static let change = RedisScript("""
        local p, node = ARGV[1], ARGV[2]
        local set = p .. 'online:' .. node
        local changed
        if ARGV[3] == '+' then changed = redis.call('SADD', set, ARGV[4]) else changed = redis.call('SREM', set, ARGV[4]) end
        if changed == 0 then return 0 end
        local sequence = redis.call('INCR', p .. 'presence-seq:' .. node)
        redis.call('PUBLISH', p .. 'presence', node .. ' ' .. sequence .. ' ' .. ARGV[3] .. ARGV[4])
        return sequence
        """)

    /// ARGV[3]: the nonce, ARGV[4]: the lease (ms), ARGV[5...]: every user online on the node.
    /// Takes the lease and replaces the node's set. Returns the sequence.
    static let register = RedisScript("""
        local p, node = ARGV[1], ARGV[2]
        local set = p .. 'online:' .. node
        redis.call('SET', p .. 'node:' .. node, ARGV[3], 'PX', ARGV[4])
        redis.call('SADD', p .. 'nodes', node)
        redis.call('DEL', set)
        for first = 5, #ARGV, 1000 do
          redis.call('SADD', set, unpack(ARGV, first, math.min(first + 999, #ARGV)))
        end
        local sequence = redis.call('INCR', p .. 'presence-seq:' .. node)
        redis.call('PUBLISH', p .. 'presence', node .. ' ' .. sequence .. ' =')
        return sequence
        """)

    /// ARGV[3]: the nonce, ARGV[4]: the lease (ms). Renews this node's lease, then deletes the
    /// set of every node whose lease expired and tells of it. Returns 1 when this node's lease
    /// was still its own, 0 when it had lapsed (the node must register again).
    static let renew = RedisScript("""
        local p = ARGV[1]
        local held = redis.call('SET', p .. 'node:' .. ARGV[2], ARGV[3], 'PX', ARGV[4], 'GET')
        for _, name in ipairs(redis.call('SMEMBERS', p .. 'nodes')) do
          if redis.call('EXISTS', p .. 'node:' .. name) == 0 then
            redis.call('DEL', p .. 'online:' .. name)
            redis.call('SREM', p .. 'nodes', name)
            local sequence = redis.call('INCR', p .. 'presence-seq:' .. name)
            redis.call('PUBLISH', p .. 'presence', name .. ' ' .. sequence .. ' !')
          end
        end
        if held == ARGV[3] then return 1 end
        return 0
        """)

    /// A node leaving on purpose: what `renew` does for an expired one, at once.
    static let leave = RedisScript("""
        local p, node = ARGV[1], ARGV[2]
        redis.call('DEL', p .. 'node:' .. node, p .. 'online:' .. node)
        redis.call('SREM', p .. 'nodes', node)
        local sequence = redis.call('INCR', p .. 'presence-seq:' .. node)
        redis.call('PUBLISH', p .. 'presence', node .. ' ' .. sequence .. ' !')
        return sequence
        """)

    /// Every node with a live lease: {name, sequence, {users…}}, read together.
    static let read = RedisScript("""
        local p = ARGV[1]
        local nodes = {}
        for _, name in ipairs(redis.call('SMEMBERS', p .. 'nodes')) do
          if redis.call('EXISTS', p .. 'node:' .. name) == 1 then
            nodes[#nodes + 1] = {name, redis.call('GET', p .. 'presence-seq:' .. name) or '0', redis.call('SMEMBERS', p .. 'online:' .. name)}
          end
        end
        return nodes
        """)
}
