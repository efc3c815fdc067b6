-- Fair lock: delete whoever holds it and wake the queue's head (docs/protocol.md §3 forceUnlock).
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] channel base
-- ARGV[1] unlock message "0", ARGV[2] now (client wall clock ms), ARGV[3] publish command
-- Returns 1 if a lock was deleted, else 0.
--! include fair_queue
local lock, queue, timeouts, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local message, now, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3]
drop_expired_waiters(queue, timeouts, now)
if redis.call('del', lock) == 1 then
  wake_head(queue, channel, publish, message)
  return 1
end
return 0
