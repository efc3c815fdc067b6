-- A lease PEXPIRE is sure to accept (a whole number of ms, 1 .. 2^40), checked before the first write:
-- a script that failed half-way would leave a hash without a TTL, a lock nobody can take.
local function bad_lease(lease)
  local ms = tonumber(lease)
  if ms == nil or ms < 1 or ms > 1099511627776 or ms % 1 ~= 0 then
    return redis.error_reply('ERR invalid lease ' .. tostring(lease))
  end
  return false
end
