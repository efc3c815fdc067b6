-- Permit-expirable semaphore: give a held permit a new lease (docs/protocol.md §9, updateLeaseTime).
-- KEYS[1] semaphore, KEYS[2] {name}:timeout
-- ARGV[1] permit id (16 raw bytes), ARGV[2] new expiry ms, ARGV[3] client now ms
-- Returns 1 when updated; 0 if the permit is unknown or has expired.
local expiry = redis.call('zscore', KEYS[2], ARGV[1])
if expiry == false or tonumber(expiry) <= tonumber(ARGV[3]) then return 0 end
redis.call('zadd', KEYS[2], ARGV[2], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
return 1
