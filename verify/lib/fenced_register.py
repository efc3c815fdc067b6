"""The register the mutex workload increments: a key in a store separate from the lock server, guarded
by the fencing token. Both the read and the write carry the token, and the store refuses a token older
than the newest it has accepted (equal is fine: one holder reads, then writes).

Fencing only the write would not protect a read-modify-write: a paused holder A (token 5) that read 10
before B (token 6) read 10 too could still write 11 first, if B had not written yet, and B's 11 would
then lose A's increment. A fenced read moves the store's high-water mark to 6 as B reads, so A's late
write is refused. Tokens are compared as Lua numbers (exact below 2^53).

Keys: KEYS[1] the register, KEYS[2] the newest token accepted, KEYS[3] a hash counting accepted and
refused operations (for the report). ARGV[1] the token; ARGV[2] the value to write.
Reply: {1, value} when accepted, {0, newest token} when refused as stale."""

_FENCE = """
local token = tonumber(ARGV[1])
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
if token < newest then
  redis.call('HINCRBY', KEYS[3], 'refused', 1)
  return {0, newest}
end
if token > newest then redis.call('SET', KEYS[2], ARGV[1]) end
redis.call('HINCRBY', KEYS[3], 'accepted', 1)
"""

READ = _FENCE + "return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}\n"
WRITE = _FENCE + "redis.call('SET', KEYS[1], ARGV[2])\nreturn {1, tonumber(ARGV[2])}\n"

REGISTER = "register"
KEYS = (REGISTER, "register:fence", "register:stats")


class Stale(Exception):
    """The store refused the token: a newer one was accepted before."""


def fenced(redis, script, token, *value):
    """Runs READ or WRITE with the token; returns the value, raises Stale when refused."""
    accepted, result = redis.call("EVAL", script, len(KEYS), *KEYS, token, *value)
    if not accepted:
        raise Stale(result)
    return result
