-- Fenced lock: acquire or re-enter, and take the next fencing token (docs/protocol.md §6,
-- Redisson RFencedLock *AndGetToken).
-- KEYS[1] lock hash, KEYS[2] token counter "redisson_lock_token:{name}" (no TTL; Java's
-- RFencedLock.delete() deletes it)
-- ARGV[1] lease in ms, ARGV[2] owner field
-- Returns {the owner's new hold count, token} when acquired (every acquisition, reentrant ones too,
-- takes a new token); otherwise the holder's remaining TTL in ms (-1: no TTL). Redisson answers
-- {-1, token} / {pttl, -1}, where a holder without a TTL looks like token -1 "acquired".
--! include lease_guard
local lock, counter, lease, owner = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local bad = bad_lease(lease)
if bad then
  return bad
end
if redis.call('exists', lock) == 0 or redis.call('hexists', lock, owner) == 1 then
  local token = redis.call('incr', counter)
  local count = redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return {count, token}
end
return redis.call('pttl', lock)
