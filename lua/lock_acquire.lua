-- Reentrant lock: acquire or re-enter (docs/protocol.md §2, Redisson tryLockInnerAsync).
-- KEYS[1] lock hash
-- ARGV[1] lease in ms, ARGV[2] owner field "<client uuid>:<owner id>"
-- Returns {the owner's new hold count} when acquired (Redisson answers nil; the count lets the client
-- follow the server); otherwise the holder's remaining TTL in ms (-1: no TTL).
--! include lease_guard
local lock, lease, owner = KEYS[1], ARGV[1], ARGV[2]
local bad = bad_lease(lease)
if bad then
  return bad
end
if redis.call('exists', lock) == 0 or redis.call('hexists', lock, owner) == 1 then
  local count = redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return {count}
end
return redis.call('pttl', lock)
