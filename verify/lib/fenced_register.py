"""The register the mutex workload increments: a key in a store separate from the lock server, guarded
by the fencing token through deadbolt's fenced-write script (lua/fenced_write.lua, the one
deadbolt/fenced_write.hpp runs for users: what the harness checks is what users get). Both the read and
the write carry the token and the holder's writer id, and the store refuses a token older than the
newest it has accepted for the register, or equal to it from another writer (equal from the same writer
is fine: one holder reads, then writes; two holders of one token, after a failover handed it out twice,
are told apart).

Fencing only the write would not protect a read-modify-write: a paused holder A (token 5) that read 10
before B (token 6) read 10 too could still write 11 first, if B had not written yet, and B's 11 would
then lose A's increment. A fenced read moves the store's high-water mark to 6 as B reads, so A's late
write is refused.

Keys: the register, and its fence (the newest token accepted, then a space and its writer when it had
one; fence_key_of: the same slot)."""
import os

SCRIPT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lua", "fenced_write.lua")
with open(SCRIPT_PATH, encoding="utf-8") as _f:
    SCRIPT = _f.read()

REGISTER = "register"


def fence_key_of(key):
    """A key with a hash tag keeps it first; any other key becomes the tag (deadbolt/fenced_write.hpp)."""
    start = key.find("{")
    end = key.find("}", start + 1) if start >= 0 else -1
    return key + ":fence" if start >= 0 and end > start + 1 else "{" + key + "}:fence"


def fence_token(stored):
    """The token a fence key holds ("323" or "323 <writer>"; None: 0)."""
    return int((stored or "0").split(" ", 1)[0])


def register_of(lock):
    """The register of a lock of the library workload (verify/client: `register:<lock>`); the CLI
    workload's one lock uses REGISTER."""
    return REGISTER if lock is None else f"register:{lock}"


class Stale(Exception):
    """The store refused the token: a newer one was accepted before."""


def _run(redis, key, mode, token, *args):
    reply = redis.call("EVAL", SCRIPT, 2, key, fence_key_of(key), mode, token, *args)
    if reply[0] != 1:
        raise Stale(reply[1])
    return reply


def fenced_read(redis, token, key=REGISTER, writer=""):
    """The register's value (0 when unset); raises Stale when the token is refused. `writer`: who
    holds the token (empty: an anonymous writer)."""
    reply = _run(redis, key, "get", token, *([writer] if writer else []))
    return int(reply[2]) if len(reply) > 2 and reply[2] is not None else 0


def fenced_write(redis, token, value, key=REGISTER, writer=""):
    """Sets the register; raises Stale when the token is refused."""
    _run(redis, key, "set", token, value, *([writer] if writer else []))
    return value
