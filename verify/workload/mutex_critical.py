#!/usr/bin/env python3
"""The critical section of the mutex workload: the COMMAND that `deadbolt run --fenced` runs under the
lock. It increments the fenced register once (fenced read, some work, fenced write) and prints each
step as a history event (JSON line) on standard output, which the client that started `deadbolt`
records.

Like many real services, it does not drop its work on SIGTERM (what `deadbolt run` sends when the
lease is lost): it records the signal, finishes the increment it is in, then exits. A holder that was
paused therefore writes late, with its old token, and the store must refuse it: that is what fencing
is for.

Environment: DEADBOLT_FENCING_TOKEN and DEADBOLT_LOCK_NAME (from deadbolt), VERIFY_HOLD (this hold's
id), VERIFY_LOCK_PORTS (every data node: the lease probe asks them all, as it cannot know which one
deadbolt uses after a failover), VERIFY_STORE_PORT, VERIFY_WORK_MS (the longest pause between read and write),
VERIFY_FENCED (0: the store is not given the token, as a resource without fencing; the history still
records the token the holder had, so the checker sees what the store accepted). The writer id the store
is given with the token is this hold's id: each `deadbolt run` is a holder of its own (its lock field,
"<client uuid>:<pid>", is too).
"""
import json
import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fenced_register import Stale, fenced_read, fenced_write  # noqa: E402
from resp import Redis, RedisError  # noqa: E402

# The remaining TTL of this process's hold, if the lock hash still has deadbolt's field for it
# ("<client uuid>:<owner id>", the owner id being deadbolt's pid: our parent, or our grandparent when
# deadbolt runs COMMAND under its guardian process): -3 when it has not.
LEASE_PROBE = """
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  for i = 1, #ARGV do
    local suffix = ':' .. ARGV[i]
    if string.sub(field, -#suffix) == suffix then return redis.call('PTTL', KEYS[1]) end
  end
end
return -3
"""


def deadbolt_pids():
    """Our parent and its parent: one of them is deadbolt."""
    parent = os.getppid()
    try:
        with open(f"/proc/{parent}/stat", encoding="ascii") as f:
            grandparent = int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return [parent]
    return [parent, grandparent]


HOLD = os.environ["VERIFY_HOLD"]
PROCESS = HOLD.split(".")[0]


def emit(kind, f, **fields):
    event = {"time": time.monotonic_ns(), "process": PROCESS, "hold": HOLD, "type": kind, "f": f, **fields}
    try:
        os.write(1, (json.dumps(event) + "\n").encode())  # one write per line: safe from a signal handler
    except OSError:
        pass


def on_sigterm(signum, frame):
    emit("info", "lease-lost", signal="SIGTERM")


def probe_lease(lock_ports, name):
    """Records a lower bound of when the server may expire this hold: the probe's send time + PTTL.

    Every data node is asked at once (a replica answers with the replicated hold's PTTL, a cluster
    node that does not own the slot with MOVED, ignored); the longest PTTL found is the hold's
    master's, as replicas follow it."""
    owners = deadbolt_pids()
    sent = time.monotonic_ns()
    answers, errors = [], []

    def ask(port):
        try:
            with Redis(port, timeout=0.3) as r:
                answers.append(r.call("EVAL", LEASE_PROBE, 1, name, *owners))
        except (OSError, RedisError) as e:
            errors.append(str(e) or type(e).__name__)
    threads = [threading.Thread(target=ask, args=(port,)) for port in lock_ports]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ttl = max(answers, default=None)
    if ttl is None:
        return emit("fail", "lease", error="; ".join(errors))
    if ttl >= 0:
        emit("ok", "lease", lease_deadline=sent + ttl * 1_000_000)
    else:
        emit("fail", "lease", error="not held" if ttl == -3 else "no expiry")


def increment(store_port, token, work_ms, fenced_token):
    writer = HOLD if fenced_token else ""  # unfenced: token 0 and no writer, which nothing refuses
    try:
        store = Redis(store_port, timeout=2.0)
    except OSError as e:
        return emit("fail", "read", token=token, error=f"store: {e}")
    with store:
        emit("invoke", "read", token=token, writer=HOLD)
        try:
            value = fenced_read(store, fenced_token, writer=writer)
        except Stale:
            return emit("fail", "read", token=token, error="stale")
        except OSError as e:
            return emit("info", "read", token=token, error=str(e) or type(e).__name__)
        emit("ok", "read", token=token, value=value)
        time.sleep(random.uniform(0, work_ms) / 1000)  # the work; a SIGTERM does not cut it short
        emit("invoke", "write", token=token, value=value + 1, writer=HOLD)
        try:
            fenced_write(store, fenced_token, value + 1, writer=writer)
            emit("ok", "write", token=token, value=value + 1)
        except Stale:
            emit("fail", "write", token=token, value=value + 1, error="stale")
        except OSError as e:
            emit("info", "write", token=token, value=value + 1, error=str(e) or type(e).__name__)


def main():
    signal.signal(signal.SIGTERM, on_sigterm)
    token = int(os.environ["DEADBOLT_FENCING_TOKEN"])
    emit("ok", "acquire", token=token, pgid=os.getpgrp())  # pgid: for the pause-client nemesis
    probe_lease([int(p) for p in os.environ["VERIFY_LOCK_PORTS"].split(",")], os.environ["DEADBOLT_LOCK_NAME"])
    fenced_token = token if os.environ.get("VERIFY_FENCED", "1") == "1" else 0  # 0: never older than the newest
    increment(int(os.environ["VERIFY_STORE_PORT"]), token, float(os.environ.get("VERIFY_WORK_MS", "100")), fenced_token)
    emit("invoke", "release")


if __name__ == "__main__":
    main()
