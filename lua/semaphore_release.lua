-- Semaphore: give permits back, whoever took them (docs/protocol.md §8, Redisson release).
-- KEYS[1] semaphore, KEYS[2] channel redisson_sc:{name}
-- ARGV[1] permits, ARGV[2] publish command
-- Publishes and returns the new available count.
local value = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], value)
return value
