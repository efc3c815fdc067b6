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

-- Takes the lock if it is free and the owner is first in line (or nobody is), or re-enters it. The
-- owner's new hold count, or false.
-- Taking it moves everyone behind up one place: each deadline moves by the same amount, so the gaps
-- (each waiter's own timeout) stay. Redisson moves them by minus the taker's waiter timeout, which
-- leaves the new head the deadline the taker had: however long the queue stays busy, the head's
-- deadline stays the first waiter's (the first holder's lease end plus one timeout), and once the
-- clock passes it a live head is dropped as stale, unwoken. Here the deadlines move by at least as
-- much as makes the new head's count from the new holder's lease end (`now` + `lease` + its own
-- timeout, the deadline it would get by joining now), and never by less than Redisson's amount: no
-- entry lapses sooner than Redisson's own scripts would let it.
local function take_or_reenter(lock, queue, timeouts, owner, lease, wait, now)
  if redis.call('exists', lock) == 0 and
      (redis.call('exists', queue) == 0 or redis.call('lindex', queue, 0) == owner) then
    local taker_deadline = tonumber(redis.call('zscore', timeouts, owner))
    redis.call('lpop', queue)
    redis.call('zrem', timeouts, owner)
    local shift = -wait
    if taker_deadline ~= nil then
      shift = math.max(shift, now + tonumber(lease) - taker_deadline)
    end
    local waiters = redis.call('zrange', timeouts, 0, -1)
    for i = 1, #waiters do
      redis.call('zincrby', timeouts, shift, waiters[i])
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
