-- Semaphore: take permits if that many are available (docs/protocol.md §8, Redisson tryAcquire).
-- KEYS[1] semaphore (STRING: available permits; missing = 0)
-- ARGV[1] permits wanted
-- Returns 1 when taken, else 0.
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  return 1
end
return 0
