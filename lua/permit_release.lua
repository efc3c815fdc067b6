-- Permit-expirable semaphore: release one permit by id (docs/protocol.md §9, Redisson tryRelease).
-- KEYS[1] semaphore, KEYS[2] channel, KEYS[3] {name}:timeout
-- ARGV[1] permit id (16 raw bytes), ARGV[2] permits (1), ARGV[3] client now ms, ARGV[4] publish command
-- Returns 1 when released; 0 if the id was unknown, or had expired (its permit is returned anyway).
local expiry = redis.call('zscore', KEYS[3], ARGV[1])
local removed = redis.call('zrem', KEYS[3], ARGV[1])
if removed == 0 then return 0 end
local value = redis.call('incrby', KEYS[1], ARGV[2])
redis.call(ARGV[4], KEYS[2], value)
if tonumber(expiry) <= tonumber(ARGV[3]) then return 0 end
return 1
