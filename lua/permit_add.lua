-- Permit-expirable semaphore: add (or, negative, remove) permits (docs/protocol.md §9, Redisson
-- RPermitExpirableSemaphore.addPermits).
-- KEYS[1] semaphore, KEYS[2] channel
-- ARGV[1] permits to add, ARGV[2] publish command
-- Returns the new available count. Publishes the change, and only when permits were added: a Java
-- peer reads the payload as the number of permits freed (a negative one makes it log an error).
local value = redis.call('get', KEYS[1])
if value == false then value = 0 end
local delta = tonumber(ARGV[1])
local updated = tonumber(value) + delta
redis.call('set', KEYS[1], updated)
if delta > 0 then
  redis.call(ARGV[2], KEYS[2], delta)
end
return updated
