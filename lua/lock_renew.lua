-- Watchdog: extend every lock in the batch that its owner still holds (docs/protocol.md §11, LockTask).
-- KEYS[1..n] lock hashes (one cluster slot)
-- ARGV[1] lease in ms, ARGV[1+i] owner field of KEYS[i]
-- Returns one flag per key: 1 renewed, 0 no longer held by that owner (or not a lock hash at all:
-- a key of the wrong type must not stop the renewal of the others).
local lease = ARGV[1]
local renewed = {}
for i = 1, #KEYS do
  local held = redis.pcall('hexists', KEYS[i], ARGV[i + 1])
  if held == 1 then
    redis.call('pexpire', KEYS[i], lease)
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
