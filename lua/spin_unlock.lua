-- Spin lock: release one hold, idempotently, without publishing (docs/protocol.md §5 and §1.4).
-- KEYS[1] lock hash, KEYS[2] unlock latch "redisson_unlock_latch:{name}:<request id>"
-- ARGV[1] lease in ms for a remaining hold, ARGV[2] owner field, ARGV[3] latch TTL in ms
-- Returns nil if the owner holds no hold; 0 if still held (reentrant); 1 if released.
-- A retry with the same request id returns the first attempt's result from the latch.
--! include unlock_latch
local lock, latch = KEYS[1], KEYS[2]
local lease, owner, latch_ttl = ARGV[1], ARGV[2], ARGV[3]
local earlier = latched(latch)
if earlier then
  return earlier
end
local released = release_hold(lock, owner, lease, latch, latch_ttl)
if released == false then
  return nil
end
return released
