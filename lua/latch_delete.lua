-- Count-down latch: delete it (docs/protocol.md §10, delete).
-- KEYS[1] latch, KEYS[2] channel
-- ARGV[1] new-count message "1", ARGV[2] publish command
-- Returns 1 if it existed (and publishes), else 0.
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
