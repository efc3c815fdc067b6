-- Fair lock: release one hold, idempotently, and wake the queue's head (docs/protocol.md §3 and §1.4).
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] channel base "redisson_lock__channel:{name}",
-- KEYS[5] unlock latch
-- ARGV[1] unlock message "0", ARGV[2] lease in ms for a remaining hold, ARGV[3] owner field,
-- ARGV[4] now (client wall clock ms), ARGV[5] publish command, ARGV[6] latch TTL in ms
-- Returns nil if the owner holds no hold; 0 if still held; 1 if released (also when the lock is gone:
-- Redisson's answer for a lock that expired).
--! include fair_queue
--! include unlock_latch
local lock, queue, timeouts, channel, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local message, lease, owner, now, publish, latch_ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
local earlier = latched(latch)
if earlier then
  return earlier
end
drop_expired_waiters(queue, timeouts, now)
if redis.call('exists', lock) == 0 then
  wake_head(queue, channel, publish, message)
  return answer(latch, latch_ttl, 1)
end
local released = release_hold(lock, owner, lease, latch, latch_ttl)
if released == false then
  return nil
end
if released == 1 then
  wake_head(queue, channel, publish, message)
end
return released
