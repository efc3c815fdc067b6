-- Read lock: release one shared hold, idempotently (docs/protocol.md §4 and §1.4).
-- KEYS[1] lock hash, KEYS[2] channel "redisson_rwlock:{name}", KEYS[3] this owner's hold timeout prefix,
-- KEYS[4] key prefix "{name}" (the name itself when it has a '{'), KEYS[5] unlock latch
-- ARGV[1] read unlock message "0", ARGV[2] owner field, ARGV[3] publish command, ARGV[4] latch TTL in ms
-- Returns nil if the owner holds no read hold; 0 if the lock is still held (by anyone); 1 if released.
-- The lock's TTL becomes the longest remaining hold timeout of all holders.
--! include unlock_latch
local lock, channel, prefix, key_prefix, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local message, owner, publish, latch_ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
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
if redis.call('hexists', lock, owner) == 0 then
  return nil
end
local left = redis.call('hincrby', lock, owner, -1)
if left == 0 then
  redis.call('hdel', lock, owner)
end
redis.call('del', prefix .. ':' .. (left + 1))
if redis.call('hlen', lock) > 1 then
  local longest = -3
  for _, field in ipairs(redis.call('hkeys', lock)) do
    local count = tonumber(redis.call('hget', lock, field))
    if type(count) == 'number' then
      for i = count, 1, -1 do
        longest = math.max(longest, redis.call('pttl', key_prefix .. ':' .. field .. ':rwlock_timeout:' .. i))
      end
    end
  end
  if longest > 0 then
    redis.call('pexpire', lock, longest)
    return answer(latch, latch_ttl, 0)
  end
  if mode == 'write' then
    return answer(latch, latch_ttl, 0)
  end
end
redis.call('del', lock)
redis.call(publish, channel, message)
return answer(latch, latch_ttl, 1)
