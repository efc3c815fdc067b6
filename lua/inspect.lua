-- Inspect: everything stored for one name, read at one instant (docs/protocol.md §0, the key table).
-- KEYS[1] name, KEYS[2] redisson_lock_queue:{name} (fair queue, LIST), KEYS[3] redisson_lock_timeout:{name}
-- (fair deadlines, ZSET), KEYS[4] redisson_lock_token:{name} (fencing token, STRING),
-- KEYS[5] {name}:timeout (an expirable semaphore's permits, ZSET)
-- ARGV[1] the most entries listed per collection
-- Returns {type of name, PTTL name, data, queue, deadlines, token, permits, truncated, permit count}:
-- data is a hash's
-- fields and values (flat) or a string's first 64 bytes; ZSETs come as member, score, ...; a key of an
-- unexpected type reads as empty (false for the token). Read-only: nothing is changed.
local most = tonumber(ARGV[1])
local truncated = 0

local function type_of(key)
  return redis.call('type', key)['ok']
end

local function first(list, n)
  if #list <= n then return list end
  truncated = 1
  local out = {}
  for i = 1, n do out[i] = list[i] end
  return out
end

local function zset(key)
  if type_of(key) ~= 'zset' then return {} end
  if redis.call('zcard', key) > most then truncated = 1 end
  return redis.call('zrange', key, 0, most - 1, 'withscores')
end

local kind = type_of(KEYS[1])
local data = {}
if kind == 'hash' then
  if redis.call('hlen', KEYS[1]) > most then
    -- HSCAN's COUNT is a hint: cut what it returns too.
    data = first(redis.call('hscan', KEYS[1], 0, 'count', most)[2], 2 * most)
    truncated = 1
  else
    data = redis.call('hgetall', KEYS[1])
  end
elseif kind == 'string' then
  data = {redis.call('getrange', KEYS[1], 0, 63)}
end

local queue = {}
if type_of(KEYS[2]) == 'list' then
  if redis.call('llen', KEYS[2]) > most then truncated = 1 end
  queue = redis.call('lrange', KEYS[2], 0, most - 1)
end
local deadlines = zset(KEYS[3])
local token = false
if type_of(KEYS[4]) == 'string' then token = redis.call('getrange', KEYS[4], 0, 63) end
local permits = zset(KEYS[5])
local permit_count = 0
if type_of(KEYS[5]) == 'zset' then permit_count = redis.call('zcard', KEYS[5]) end
local ttl = redis.call('pttl', KEYS[1])
return {kind, ttl, data, queue, deadlines, token, permits, truncated, permit_count}
