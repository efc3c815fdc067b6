-- Read lock: take a shared hold (docs/protocol.md §4, Redisson RedissonReadLock tryLockInnerAsync).
-- KEYS[1] lock hash, KEYS[2] this owner's hold timeout prefix "{name}:<owner field>:rwlock_timeout"
-- ARGV[1] lease in ms, ARGV[2] owner field "<uuid>:<owner>", ARGV[3] the owner's write field "<uuid>:<owner>:write"
-- Returns {the owner's new read hold count} when acquired (Redisson: nil) (readers share; the writer itself may also read); otherwise the writer's
-- remaining TTL in ms. Each hold n has its own timeout key "<prefix>:n" with the lease.
--! include lease_guard
local lock, prefix = KEYS[1], KEYS[2]
local lease, owner, write_owner = ARGV[1], ARGV[2], ARGV[3]
local bad = bad_lease(lease)
if bad then
  return bad
end
local mode = redis.call('hget', lock, 'mode')
if mode == false then
  redis.call('hset', lock, 'mode', 'read')
  redis.call('hset', lock, owner, 1)
  redis.call('set', prefix .. ':1', 1, 'px', lease)
  redis.call('pexpire', lock, lease)
  return {1}
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', lock, write_owner) == 1) then
  local n = redis.call('hincrby', lock, owner, 1)
  redis.call('set', prefix .. ':' .. n, 1, 'px', lease)
  redis.call('pexpire', lock, math.max(redis.call('pttl', lock), tonumber(lease)))
  return {n}
end
return redis.call('pttl', lock)
