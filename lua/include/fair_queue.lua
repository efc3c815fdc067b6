-- The fair lock's queue handling, shared by its scripts (inlined where a script says "--! include").
-- Waiters whose deadline passed leave the head of the queue (Redisson's stale-waiter cleanup).
local function drop_expired_waiters(queue, timeouts, now)
  while true do
    local head = redis.call('lindex', queue, 0)
    if head == false then return end
    local deadline = tonumber(redis.call('zscore', timeouts, head))
    if deadline ~= nil and deadline > now then return end
    redis.call('zrem', timeouts, head)
    redis.call('lpop', queue)
  end
end

-- Takes the lock if it is free and the owner is first in line (everyone behind moves up one
-- waiter timeout), or re-enters it. The owner's new hold count, or false.
local function take_or_reenter(lock, queue, timeouts, owner, lease, wait)
  if redis.call('exists', lock) == 0 and
      (redis.call('exists', queue) == 0 or redis.call('lindex', queue, 0) == owner) then
    redis.call('lpop', queue)
    redis.call('zrem', timeouts, owner)
    local waiters = redis.call('zrange', timeouts, 0, -1)
    for i = 1, #waiters do
      redis.call('zincrby', timeouts, -wait, waiters[i])
    end
    redis.call('hset', lock, owner, 1)
    redis.call('pexpire', lock, lease)
    return 1
  end
  if redis.call('hexists', lock, owner) == 1 then
    local count = redis.call('hincrby', lock, owner, 1)
    redis.call('pexpire', lock, lease)
    return count
  end
  return false
end

-- Publishes `message` on the head waiter's own channel "<channel base>:<owner field>".
local function wake_head(queue, channel, publish, message)
  local head = redis.call('lindex', queue, 0)
  if head ~= false then
    redis.call(publish, channel .. ':' .. head, message)
  end
end
