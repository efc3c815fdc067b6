-- Count-down latch: one count down (docs/protocol.md §10, countDown).
-- KEYS[1] latch, KEYS[2] channel
-- ARGV[1] zero message "0", ARGV[2] publish command
-- Deletes the latch at zero (publishing "0" when it reaches exactly zero); returns the new count.
local v = redis.call('decr', KEYS[1])
if v <= 0 then redis.call('del', KEYS[1]) end
if v == 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]) end
return v
