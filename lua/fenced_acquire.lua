-- Fenced lock: acquire or re-enter, and take the next fencing token (PROTOCOL.md §6,
-- Redisson RFencedLock *AndGetToken).
-- KEYS[1] lock hash, KEYS[2] token counter "redisson_lock_token:{name}" (no TTL, never deleted)
-- ARGV[1] lease in ms, ARGV[2] owner field
-- Returns {-1, token} when acquired (every acquisition, reentrant ones too, takes a new token);
-- otherwise {the holder's remaining TTL in ms, -1}.
local lock, counter, lease, owner = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
if redis.call('exists', lock) == 0 or redis.call('hexists', lock, owner) == 1 then
  local token = redis.call('incr', counter)
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return {-1, token}
end
return {redis.call('pttl', lock), -1}
