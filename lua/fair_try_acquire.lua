-- Fair lock: one attempt that never joins the queue (PROTOCOL.md §3, tryLock() without a wait).
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] timeouts
-- ARGV[1] lease in ms, ARGV[2] owner field, ARGV[3] now (client wall clock ms), ARGV[4] waiter timeout in ms
-- Returns nil when acquired, 1 when not.
--! include fair_queue
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local lease, owner, now, wait = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
drop_expired_waiters(queue, timeouts, now)
if take_or_reenter(lock, queue, timeouts, owner, lease, wait) then
  return nil
end
return 1
