-- Fair lock: acquire, re-enter, or take (or keep) a place in the FIFO queue (docs/protocol.md §3,
-- Redisson RedissonFairLock tryLockInnerAsync, waiting variant).
-- KEYS[1] lock hash, KEYS[2] queue "redisson_lock_queue:{name}", KEYS[3] timeouts "redisson_lock_timeout:{name}"
-- ARGV[1] lease in ms, ARGV[2] owner field, ARGV[3] waiter timeout in ms, ARGV[4] now (client wall clock ms)
-- Returns {the owner's new hold count} when acquired (Redisson: nil); otherwise an estimate in ms of the wait ahead (>= 0).
--! include fair_queue
--! include lease_guard
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local lease, owner, wait, now = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local bad = bad_lease(lease)
if bad then
  return bad
end
drop_expired_waiters(queue, timeouts, now)
local count = take_or_reenter(lock, queue, timeouts, owner, lease, wait, now)
if count then
  return {count}
end
if redis.call('zscore', timeouts, owner) ~= false then
  return math.max(0, redis.call('pttl', lock))
end
local last = redis.call('lindex', queue, -1)
local ahead
if last ~= false and last ~= owner and redis.call('zscore', timeouts, last) ~= false then
  ahead = tonumber(redis.call('zscore', timeouts, last)) - now
else
  ahead = redis.call('pttl', lock)
end
if redis.call('zadd', timeouts, ahead + wait + now, owner) == 1 then
  redis.call('rpush', queue, owner)
end
return ahead
