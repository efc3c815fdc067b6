-- Write lock: take the exclusive hold or re-enter it (docs/protocol.md §4, Redisson RedissonWriteLock).
-- KEYS[1] lock hash
-- ARGV[1] lease in ms, ARGV[2] write field "<uuid>:<owner>:write"
-- Returns {the owner's new write hold count} when acquired (Redisson: nil); otherwise the holders' remaining TTL in ms. Re-entry adds the lease to
-- the remaining TTL (Redisson's rule for the write lock).
--! include lease_guard
local lock, lease, owner = KEYS[1], ARGV[1], ARGV[2]
local bad = bad_lease(lease)
if bad then
  return bad
end
local mode = redis.call('hget', lock, 'mode')
if mode == false then
  redis.call('hset', lock, 'mode', 'write')
  redis.call('hset', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return {1}
end
if mode == 'write' and redis.call('hexists', lock, owner) == 1 then
  local count = redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, redis.call('pttl', lock) + tonumber(lease))
  return {count}
end
return redis.call('pttl', lock)
