-- Semaphore: take every available permit (docs/protocol.md §8, drainPermits).
-- KEYS[1] semaphore
-- Returns how many were available (0 if the semaphore does not exist).
local value = redis.call('get', KEYS[1])
if value == false then return 0 end
redis.call('set', KEYS[1], 0)
return tonumber(value)
