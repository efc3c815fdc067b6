-- Spin lock: release one hold, idempotently, without publishing (PROTOCOL.md §5 and §1.4).
-- KEYS[1] lock hash, KEYS[2] unlock latch "redisson_unlock_latch:{name}:<request id>"
-- ARGV[1] lease in ms for a remaining hold, ARGV[2] owner field, ARGV[3] latch TTL in ms
-- Returns nil if the owner holds no hold; 0 if still held (reentrant); 1 if released.
-- A retry with the same request id returns the first attempt's result from the latch.
local lock, latch = KEYS[1], KEYS[2]
local lease, owner, latch_ttl = ARGV[1], ARGV[2], ARGV[3]
local earlier = redis.call('get', latch)
if earlier then
  return tonumber(earlier)
end
if redis.call('hexists', lock, owner) == 0 then
  return nil
end
if redis.call('hincrby', lock, owner, -1) > 0 then
  redis.call('pexpire', lock, lease)
  redis.call('set', latch, 0, 'px', latch_ttl)
  return 0
end
redis.call('del', lock)
redis.call('set', latch, 1, 'px', latch_ttl)
return 1
