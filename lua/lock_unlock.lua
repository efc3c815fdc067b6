-- Reentrant lock: release one hold, idempotently (docs/protocol.md §2 and §1.4, the unlock latch).
-- KEYS[1] lock hash, KEYS[2] lock channel, KEYS[3] unlock latch "redisson_unlock_latch:{name}:<request id>"
-- ARGV[1] unlock message "0", ARGV[2] lease in ms for a remaining hold, ARGV[3] owner field,
-- ARGV[4] publish command ("publish" or "spublish"), ARGV[5] latch TTL in ms
-- Returns nil if the owner holds no hold; 0 if still held (reentrant); 1 if released.
-- A retry with the same request id returns the first attempt's result from the latch.
--! include unlock_latch
local lock, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local message, lease, owner, publish, latch_ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local earlier = latched(latch)
if earlier then
  return earlier
end
local released = release_hold(lock, owner, lease, latch, latch_ttl)
if released == false then
  return nil
end
if released == 1 then
  redis.call(publish, channel, message)
end
return released
