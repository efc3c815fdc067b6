-- Read/write lock: delete it if it is in the given mode, and wake waiters (docs/protocol.md §4 forceUnlock).
-- KEYS[1] lock hash, KEYS[2] channel "redisson_rwlock:{name}"
-- ARGV[1] mode "read" or "write", ARGV[2] message ("0" read, "1" write), ARGV[3] publish command
-- Returns 1 if it was deleted, else 0.
if redis.call('hget', KEYS[1], 'mode') == ARGV[1] then
  redis.call('del', KEYS[1])
  redis.call(ARGV[3], KEYS[2], ARGV[2])
  return 1
end
return 0
