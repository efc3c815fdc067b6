-- Watchdog for read holds (docs/protocol.md §4, ReadLockTask, 4.4+: our own holds only).
-- KEYS[2i-1] lock hash, KEYS[2i] that owner's hold timeout prefix (all in one cluster slot)
-- ARGV[1] lease in ms, ARGV[1+i] owner field of pair i
-- Extends each of the owner's hold timeout keys "<prefix>:1..count", and the lock if any is alive.
-- Returns one flag per pair: 1 renewed, 0 the owner holds no read hold any more.
local lease = ARGV[1]
local renewed = {}
for i = 1, #KEYS / 2 do
  local lock, prefix = KEYS[2 * i - 1], KEYS[2 * i]
  local count = tonumber(redis.pcall('hget', lock, ARGV[i + 1]))
  local alive = 0
  if type(count) == 'number' then
    for n = 1, count do
      if redis.call('pexpire', prefix .. ':' .. n, lease) == 1 then
        alive = 1
      end
    end
    if alive == 1 then
      redis.call('pexpire', lock, math.max(redis.call('pttl', lock), tonumber(lease)))
    end
  end
  renewed[i] = alive
end
return renewed
