-- Fair lock: one attempt that never joins the queue (docs/protocol.md §3, tryLock() without a wait).
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] timeouts
-- ARGV[1] lease in ms, ARGV[2] owner field, ARGV[3] now (client wall clock ms), ARGV[4] waiter timeout in ms
-- Returns {the owner's new hold count} when acquired (Redisson: nil), 1 when not.
--! include fair_queue
--! include lease_guard
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local lease, owner, now, wait = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local bad = bad_lease(lease)
if bad then
  return bad
end
drop_expired_waiters(queue, timeouts, now)
local count = take_or_reenter(lock, queue, timeouts, owner, lease, wait, now)
if count then
  return {count}
end
return 1
