-- Fair lock: a waiter that stops waiting leaves the queue (docs/protocol.md §3, acquireFailedAsync).
-- KEYS[1] queue, KEYS[2] timeouts, KEYS[3] lock hash, KEYS[4] channel base
-- ARGV[1] owner field, ARGV[2] waiter timeout in ms, ARGV[3] unlock message "0", ARGV[4] publish command
-- Everyone behind it moves up one place. Our addition: if the lock is free, the new head is told
-- (a hint; Redisson's waiters would otherwise find out only when their own wait ends).
--! include fair_queue
local queue, timeouts, lock, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, wait, message, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local waiters = redis.call('lrange', queue, 0, -1)
local i = 1
while i <= #waiters and waiters[i] ~= owner do
  i = i + 1
end
for j = i + 1, #waiters do
  redis.call('zincrby', timeouts, -wait, waiters[j])
end
redis.call('zrem', timeouts, owner)
redis.call('lrem', queue, 0, owner)
if i == 1 and i <= #waiters and redis.call('exists', lock) == 0 then
  wake_head(queue, channel, publish, message)
end
return 1
