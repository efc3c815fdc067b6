-- The unlock latch (docs/protocol.md §1.4), shared by the unlock scripts: a retry of one unlock (the same
-- request id, so the same latch key) gets the first attempt's answer instead of releasing twice.
-- The earlier answer (0 or 1), or false if this is the first attempt.
local function latched(latch)
  local earlier = redis.call('get', latch)
  if earlier then
    return tonumber(earlier)
  end
  return false
end

-- Remembers `result` for retries and returns it.
local function answer(latch, latch_ttl, result)
  redis.call('set', latch, result, 'px', latch_ttl)
  return result
end

-- Releases one of `owner`'s holds on a lock hash: false if it holds none (not latched); 0 if some
-- remain (their lease restarts); 1 if that was the last one (the hash is deleted). A last hold is
-- only read, not counted down: its hash goes anyway, and the release takes one call less.
local function release_hold(lock, owner, lease, latch, latch_ttl)
  local holds = redis.call('hget', lock, owner)
  if holds == false then
    return false
  end
  if holds ~= '1' and redis.call('hincrby', lock, owner, -1) > 0 then
    redis.call('pexpire', lock, lease)
    return answer(latch, latch_ttl, 0)
  end
  redis.call('del', lock)
  return answer(latch, latch_ttl, 1)
end
