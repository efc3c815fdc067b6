-- A fenced read or write of a resource kept in Redis (include/deadbolt/fenced_write.hpp,
-- docs/fenced_writes.md): done only if the caller's fencing token is not older than the newest one
-- accepted for the resource, which it then becomes; a token equal to the newest only from the writer
-- the fence accepted it from (a failover can hand one token to two holders). Not part of the Redisson
-- protocol: the resource's own keys, which no Redisson object uses.
-- KEYS[1] the resource (a string), KEYS[2] its fence: the newest token accepted, then a space and its
-- writer when it had one ("323 <client id>:<owner>"; a token alone: an anonymous writer). Same slot.
-- ARGV[1] 'get' or 'set'; ARGV[2] the token (a decimal number); 'set': ARGV[3] the value to set. Then,
-- optional, the writer (ARGV[3] for 'get', ARGV[4] for 'set'); none or empty: an anonymous writer.
-- Reply: {1, newest token, value} accepted (get: the value, absent if the key has none; set: no value),
-- {0, newest token} refused: a newer token was accepted before, or this one from another writer.
-- Tokens are compared as decimal strings, exact for every 64-bit token (Lua's numbers are not).
local function decimal(text)
  if type(text) ~= 'string' or not string.match(text, '^%d+$') or #text > 20 then return nil end
  local digits = string.gsub(text, '^0+', '')
  if digits == '' then return '0' end
  return digits
end
local mode = ARGV[1]
if mode ~= 'get' and mode ~= 'set' then
  return redis.error_reply("ERR fenced write: the operation must be 'get' or 'set'")
end
local token = decimal(ARGV[2])
if not token then
  return redis.error_reply('ERR fenced write: the fencing token must be a decimal number (at most 20 digits)')
end
if mode == 'set' and ARGV[3] == nil then
  return redis.error_reply('ERR fenced write: set needs a value')
end
local writer = ARGV[mode == 'set' and 4 or 3] or ''
local stored = redis.call('GET', KEYS[2])
local newest, newest_writer = '0', ''
if stored then
  local mark, by = string.match(stored, '^(%d+) (.*)$')
  newest = decimal(mark or stored)
  if not newest then
    return redis.error_reply('ERR fenced write: the fence key does not hold a fencing token')
  end
  newest_writer = by or ''
end
if #token < #newest or (#token == #newest and token < newest) then
  return {0, newest}
end
if token == newest and stored and writer ~= newest_writer then
  return {0, newest}
end
if token ~= newest or writer ~= newest_writer then
  redis.call('SET', KEYS[2], writer == '' and token or (token .. ' ' .. writer))
end
if mode == 'set' then
  redis.call('SET', KEYS[1], ARGV[3])
  return {1, token}
end
return {1, token, redis.call('GET', KEYS[1])}
