-- Reentrant lock: acquire or re-enter (PROTOCOL.md §2, Redisson tryLockInnerAsync).
-- KEYS[1] lock hash
-- ARGV[1] lease in ms, ARGV[2] owner field "<client uuid>:<owner id>"
-- Returns nil when acquired; otherwise the holder's remaining TTL in ms (-1: no TTL).
local lock, lease, owner = KEYS[1], ARGV[1], ARGV[2]
if redis.call('exists', lock) == 0 or redis.call('hexists', lock, owner) == 1 then
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return nil
end
return redis.call('pttl', lock)
