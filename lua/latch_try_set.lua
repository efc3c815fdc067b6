-- Count-down latch: set the count only if the latch does not exist (docs/protocol.md §10, trySetCount).
-- KEYS[1] latch (STRING count), KEYS[2] channel redisson_countdownlatch__channel__{name}
-- ARGV[1] new-count message "1", ARGV[2] count, ARGV[3] publish command
-- Returns 1 when set (and published), else 0.
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('set', KEYS[1], ARGV[2])
  redis.call(ARGV[3], KEYS[2], ARGV[1])
  return 1
end
return 0
