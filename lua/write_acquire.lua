-- Write lock: take the exclusive hold or re-enter it (PROTOCOL.md §4, Redisson RedissonWriteLock).
-- KEYS[1] lock hash
-- ARGV[1] lease in ms, ARGV[2] write field "<uuid>:<owner>:write"
-- Returns nil when acquired; otherwise the holders' remaining TTL in ms. Re-entry adds the lease to
-- the remaining TTL (Redisson's rule for the write lock).
local lock, lease, owner = KEYS[1], ARGV[1], ARGV[2]
local mode = redis.call('hget', lock, 'mode')
if mode == false then
  redis.call('hset', lock, 'mode', 'write')
  redis.call('hset', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return nil
end
if mode == 'write' and redis.call('hexists', lock, owner) == 1 then
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, redis.call('pttl', lock) + tonumber(lease))
  return nil
end
return redis.call('pttl', lock)
