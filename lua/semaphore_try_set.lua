-- Semaphore: set the permits only if the semaphore does not exist yet (docs/protocol.md §8, trySetPermits).
-- KEYS[1] semaphore, KEYS[2] channel
-- ARGV[1] permits, ARGV[2] publish command
-- Returns 1 when set (and published), else 0.
if redis.call('get', KEYS[1]) == false then
  redis.call('set', KEYS[1], ARGV[1])
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
