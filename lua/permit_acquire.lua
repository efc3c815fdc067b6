-- Permit-expirable semaphore: acquire permits with a lease (docs/protocol.md §9, Redisson tryAcquireAsync).
-- KEYS[1] semaphore (STRING: available count), KEYS[2] {name}:timeout (ZSET: raw 16-byte permit id ->
--   expiry ms, or NONEXP), KEYS[3] channel redisson_sc:{name}
-- ARGV[1] count, ARGV[2] expiry ms (client now + lease, or NONEXP), ARGV[3] client now ms,
-- ARGV[4] NONEXP (922337203685477), ARGV[5] publish command, ARGV[6..] the permit ids (count of them)
-- Returns -1 when acquired; otherwise the earliest expiry (ms) of an acquired permit, or nil if none
-- will expire.
local count = tonumber(ARGV[1])
local expired = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, count)
if #expired > 0 then
  redis.call('zrem', KEYS[2], unpack(expired))
  local value = redis.call('incrby', KEYS[1], #expired)
  if value > 0 then redis.call(ARGV[5], KEYS[3], value) end
end
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= count then
  redis.call('decrby', KEYS[1], count)
  for i = 6, 5 + count do redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]) end
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
  return -1
end
local earliest = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if earliest[1] ~= nil and tonumber(earliest[2]) ~= tonumber(ARGV[4]) then
  return tonumber(earliest[2])
end
return nil
