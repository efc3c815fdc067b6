-- Read/write lock: is the read (ARGV[1] "read") or the write (ARGV[1] "write") half locked?
-- KEYS[1] lock hash. Redisson's rules (docs/protocol.md §4): the write lock is locked in mode "write"; the
-- read lock in mode "read", or in mode "write" when the writer also holds reads.
-- Returns 1 or 0.
local mode = redis.call('hget', KEYS[1], 'mode')
if ARGV[1] == 'write' then
  return mode == 'write' and 1 or 0
end
if mode == 'read' or (mode == 'write' and redis.call('hlen', KEYS[1]) > 2) then
  return 1
end
return 0
