-- Semaphore: add (or, negative, remove) permits (docs/protocol.md §8, addPermits).
-- KEYS[1] semaphore, KEYS[2] channel
-- ARGV[1] permits to add, ARGV[2] publish command
-- Publishes and returns the new available count.
local value = redis.call('get', KEYS[1])
if value == false then value = 0 end
local updated = tonumber(value) + tonumber(ARGV[1])
redis.call('set', KEYS[1], updated)
redis.call(ARGV[2], KEYS[2], updated)
return updated
