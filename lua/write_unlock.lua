-- Write lock: release one exclusive hold, idempotently (docs/protocol.md §4 and §1.4).
-- KEYS[1] lock hash, KEYS[2] channel "redisson_rwlock:{name}", KEYS[3] unlock latch
-- ARGV[1] write unlock message "1", ARGV[2] lease in ms for a remaining hold, ARGV[3] write field,
-- ARGV[4] publish command, ARGV[5] latch TTL in ms
-- Returns nil if the owner holds no write hold; 0 if still held (reentrant); 1 if released. If the
-- same owner still holds reads, the lock turns into a read lock (downgrade) and nothing is published.
--! include unlock_latch
local lock, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local message, lease, owner, publish, latch_ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local earlier = latched(latch)
if earlier then
  return earlier
end
local mode = redis.call('hget', lock, 'mode')
if mode == false then
  redis.call(publish, channel, message)
  answer(latch, latch_ttl, 1)  -- Redisson latches 1 here, though it answers nil
  return nil
end
if mode ~= 'write' or redis.call('hexists', lock, owner) == 0 then
  return nil
end
if redis.call('hincrby', lock, owner, -1) > 0 then
  redis.call('pexpire', lock, lease)
  return answer(latch, latch_ttl, 0)
end
redis.call('hdel', lock, owner)
if redis.call('hlen', lock) == 1 then
  redis.call('del', lock)
  redis.call(publish, channel, message)
else
  redis.call('hset', lock, 'mode', 'read')
end
return answer(latch, latch_ttl, 1)
