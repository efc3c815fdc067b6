-- Permit-expirable semaphore: reclaim expired permits, then count (docs/protocol.md §9, availablePermits).
-- KEYS[1] semaphore, KEYS[2] {name}:timeout, KEYS[3] channel
-- ARGV[1] client now ms, ARGV[2] publish command
-- Returns the available count.
local expired = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1])
if #expired > 0 then
  redis.call('zremrangebyscore', KEYS[2], 0, ARGV[1])
  local value = redis.call('incrby', KEYS[1], #expired)
  if value > 0 then redis.call(ARGV[2], KEYS[3], value) end
end
local value = redis.call('get', KEYS[1])
if value == false then return 0 end
return tonumber(value)
