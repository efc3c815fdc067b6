#!/usr/bin/env python3
"""The checker: reads one recorded history and reports every violation it can prove.

A history is JSON lines, one event each (docs/verification.md, "The history"):

    {"time": ns, "process": "c1", "hold": "c1.7", "type": "invoke"|"ok"|"fail"|"info", "f": ...}

`time` is CLOCK_MONOTONIC in nanoseconds: every process runs on one machine, so one clock orders all
events exactly. `hold` ties together the events of one acquisition (acquire, the fenced reads and
writes made under it, its lease deadline, a lease-lost signal, its release). Other fields by `f`:

    acquire  invoke: "deadline" (when the waiter must have finished), "lease_deadline", and for the
             other kinds "kind" (semaphore, read-write), "permits", "mode"; ok: "token" (fenced lock)
    work     ok: the holder used the resource (a kind without a register)
    lease    ok: "lease_deadline" (a lower bound of when the server may expire the hold)
    read     invoke/ok/fail: "token"; ok: "value"; fail: "error" ("stale" = refused by fencing);
             invoke: "writer" (optional: the holder's id the store was given with the token)
    write    invoke/ok/fail/info: "token", "value"; info = outcome unknown; invoke: "writer" as read's
    lease-lost  info: the holder was told its lease was lost
    release  invoke: the holder stopped using the resource
    reset    info (process "nemesis"): every lock's state was lost at this instant (a restart
             without persistence); holds taken before it are lost from then on
    unreplicated  info (process "nemesis"): "phase" begin/end of a stretch in which no replica can
             acknowledge a write (every replication link cut); "replica_sync": whether the clients
             use replica sync
    lock     on every event of a hold and on a final read: which lock (a library client's workers may
             use several; each lock is checked on its own); "locks" ("a,b", on a multi lock's acquire):
             every lock the hold holds, with each of which it is checked
    final-read  ok (process "runner"): "value", the register after the run

Checks (each a function below; each returns the violations it proves):
  mutual exclusion  no two holds overlap, unless the earlier one's lease may have been lost before the
                    later one was granted; then the overlap is an *unsafe window* (how long the old
                    holder worked after its deadline), reported, and its holder must have been told
  tokens            the lock's fencing tokens are unique and increase in real-time order (a lock
                    server that forgot grants, by a restart or a failover, hands them out again)
  fencing           the store never accepted a token older than one it had already accepted (nor an
                    equal one from another writer, where operations name theirs), and never refused
                    one that was not
  lost update       the register equals the count of acknowledged increments (unknown outcomes
                    widen the range), and no two acknowledged writes wrote the same value
  liveness          every waiter finished (acquired or gave up) by its deadline, within a tolerance
                    (plus the time its own process was stopped by pause-client, if it was)
  recovery          progress resumes after each heal: a grant within a bound (given per nemesis) of
                    each nemesis "stop", unless the next fault began or the run ended first
  replica sync      no acquire was reported done while every replica's link was cut (a nemesis's
                    `unreplicated` window): nothing could have acknowledged it
  permits           a semaphore (acquire `kind` "semaphore", `permits` N): at most N holders at once
  readers-writers   a read/write lock (`kind` "read-write", `mode` read/write): readers share, a
                    writer overlaps no one (mutual exclusion's rules otherwise: leases, unsafe windows)
  fair order        a fair lock (`kind` "fair"), in a history without faults: a waiter that asked more
                    than 100 ms before another is granted before it
  progress          each client that was granted holds reached the resource (a read, write or work
                    step) under at least one of them (a wrapped command that dies before its work
                    every time overlaps nothing, writes nothing, and would pass every other check)

Only what the history proves is a violation: a bound that is not known exactly is taken in the
direction that excuses (a lease deadline is a lower bound of the server's expiry; a grant happened
at the latest when the holder learned of it).

Usage: checker.py HISTORY [--json OUT] [--tolerance-ms N] [--recovery-bound-ms N]; exit 1 when a
violation was found.
"""
import argparse
import bisect
import heapq
import itertools
import json
import sys

NS_PER_MS = 1_000_000


def load(path):
    """The history's events in time order (ties keep file order)."""
    with open(path, encoding="utf-8") as f:
        events = [json.loads(line) for line in f if line.strip()]
    return sorted(events, key=lambda e: e["time"])


class Hold:
    """One acquisition: when it was asked for and granted, its token and lease, what it did."""

    def __init__(self, hold_id, process):
        self.id = hold_id
        self.process = process
        self.invoke = None        # acquire invoke event
        self.granted = None       # acquire ok event
        self.lease_deadline = None
        self.last_work = None     # time of the holder's last event on the resource (or its release)
        self.signalled = False    # a lease-lost signal reached it
        self.kind = "mutex"       # the acquire's `kind`: mutex, semaphore (with `permits`), read-write
        self.mode = None          # read-write: "read" or "write"
        self.permits = None
        self.events = []

    @property
    def start(self):
        return self.granted["time"]

    @property
    def end(self):
        return self.last_work if self.last_work is not None else self.start


def holds_of(events):
    holds = {}
    for e in events:
        if "hold" not in e:
            continue
        h = holds.setdefault(e["hold"], Hold(e["hold"], e.get("process")))
        h.events.append(e)
        if e.get("lease_deadline") is not None:  # the latest known lower bound wins
            h.lease_deadline = max(h.lease_deadline or 0, e["lease_deadline"])
        f, kind = e["f"], e["type"]
        if f == "acquire" and kind == "invoke":
            h.invoke = e
            h.kind, h.mode, h.permits = e.get("kind", "mutex"), e.get("mode"), e.get("permits")
        elif f == "acquire" and kind == "ok":
            h.granted = e
        elif f in ("read", "write", "work", "release"):
            h.last_work = e["time"]
        elif f == "lease-lost":
            h.signalled = True
    return holds


def violation(check, message, *events):
    return {"check": check, "message": message, "events": list(events)}


def lost_at(hold, resets):
    """The earliest moment the hold may have been lost: its lease deadline, or a reset of the lock
    state after it was asked for (the grant may already have happened)."""
    candidates = [t for t in resets if t >= hold.invoke["time"]] if hold.invoke else list(resets)
    if hold.lease_deadline is not None:
        candidates.append(hold.lease_deadline)
    return min(candidates) if candidates else None


def shared(a, b):
    """Whether two holds may overlap: two readers of a read/write lock."""
    return a.mode == "read" and b.mode == "read"


def check_mutual_exclusion(holds, resets, check="mutual exclusion"):
    """Overlapping holds (sweep over grants in time order) that exclude each other (a read/write
    lock's readers share). Returns the violations, and the unsafe windows: each hold that went on
    working after its lease may have ended, while a later holder had the lock, with how long it
    worked past that moment and whom it overlapped."""
    violations, windows = [], {}
    granted = sorted((h for h in holds.values() if h.granted), key=lambda h: h.start)
    active = []
    for later in granted:
        active = [h for h in active if h.end > later.start]
        for earlier in active:
            if shared(earlier, later):
                continue
            lost = lost_at(earlier, resets)
            overlap_ms = (min(earlier.end, later.end) - later.start) / NS_PER_MS
            if lost is None or lost > later.start:
                modes = f" ({later.mode} while {earlier.mode})" if later.mode else ""
                violations.append(violation(
                    check,
                    f"{later.id} was granted the lock while {earlier.id} held it with a live lease{modes} "
                    f"(overlap {overlap_ms:.1f} ms)", earlier.granted, later.granted))
                continue
            window = windows.setdefault(earlier.id, {"holder": earlier.id, "unsafe_ms": (earlier.end - lost) / NS_PER_MS,
                                                     "overlapped": []})
            window["overlapped"].append(later.id)
            if not earlier.signalled and len(window["overlapped"]) == 1:
                violations.append(violation(
                    "lease-lost signalled",
                    f"{earlier.id} worked {window['unsafe_ms']:.1f} ms past its lease while {later.id} held the "
                    "lock, and was never told it had lost it", earlier.granted, later.granted))
        active.append(later)
    return violations, list(windows.values())


def check_permits(holds, resets):
    """A semaphore: at most `permits` holders at once (its permits have no lease; a reset of the
    server's state, which forgets who holds them, ends every hold taken before it)."""
    violations = []
    granted = sorted((h for h in holds.values() if h.granted), key=lambda h: h.start)
    active, reported = [], set()
    for later in granted:
        active = [h for h in active if h.end > later.start
                  and not any(h.invoke and h.invoke["time"] <= t <= later.start for t in resets)]
        limit = later.permits or 1
        if len(active) + 1 > limit and later.id not in reported:
            reported.add(later.id)
            others = ", ".join(h.id for h in active)
            violations.append(violation("permits", f"{later.id} was granted a permit while {others} held "
                                        f"{len(active)} of the {limit}", *(h.granted for h in active), later.granted))
        active.append(later)
    return violations


FAIR_MARGIN_MS = 100  # how much earlier a waiter must have asked for its place to be sure it was first


def check_fair_order(holds, events):
    """A fair lock, in a history without faults: a waiter that asked (invoke) more than FAIR_MARGIN_MS
    before another was still waiting when the other was granted, so it must have been granted first.
    The margin covers the way from the invoke to the server's queue (a thread scheduled late on a
    loaded machine); a fault may legitimately reorder the queue (an entry expires while the server is
    away), so a history with faults is not checked."""
    if any(e.get("process") == "nemesis" and e.get("f") == "start" for e in events):
        return []
    granted = sorted((h for h in holds.values() if h.granted and h.invoke), key=lambda h: h.invoke["time"])
    violations, waiting, i = [], [], 0  # waiting: max-heap (by grant time) of holds asked early enough
    for later in granted:
        while i < len(granted) and granted[i].invoke["time"] < later.invoke["time"] - FAIR_MARGIN_MS * NS_PER_MS:
            heapq.heappush(waiting, (-granted[i].start, granted[i].id, granted[i]))
            i += 1
        if waiting and -waiting[0][0] > later.start:
            _, _, earlier = heapq.heappop(waiting)
            violations.append(violation(
                "fair order", f"{later.id} was granted before {earlier.id}, which had asked "
                f"{(later.invoke['time'] - earlier.invoke['time']) / NS_PER_MS:.0f} ms earlier and was still waiting",
                earlier.invoke, later.invoke, later.granted, earlier.granted))
    return violations


def check_tokens(holds):
    """Tokens are unique, and a grant that ended before another was asked for has the smaller one."""
    violations, seen = [], {}
    holds = {k: h for k, h in holds.items() if h.granted is not None and "token" in h.granted}
    for h in holds.values():
        if h.granted is None:
            continue
        token = h.granted["token"]
        if token in seen:
            violations.append(violation("tokens", f"token {token} was handed out twice ({seen[token].id}, {h.id})",
                                        seen[token].granted, h.granted))
        seen.setdefault(token, h)
    grants = sorted((h.granted for h in holds.values() if h.granted), key=lambda e: e["time"])
    asks = sorted((h for h in holds.values() if h.granted and h.invoke), key=lambda h: h.invoke["time"])
    best, i = None, 0  # the grant with the largest token among those completed so far
    for h in asks:
        while i < len(grants) and grants[i]["time"] < h.invoke["time"]:
            if best is None or grants[i]["token"] > best["token"]:
                best = grants[i]
            i += 1
        if best is not None and best["token"] >= h.granted["token"]:
            violations.append(violation(
                "tokens", f"token {h.granted['token']} ({h.id}) was asked for after token {best['token']} "
                f"({best['hold']}) was granted, but is not larger", best, h.granted))
    return violations


def completions(events, f):
    """(invoke, completion) pairs of operation f, matched per hold in order."""
    pending, pairs = {}, []
    for e in events:
        if e.get("f") != f:
            continue
        if e["type"] == "invoke":
            pending[e["hold"]] = e
        elif e["hold"] in pending:
            pairs.append((pending.pop(e["hold"]), e))
    pairs.extend((inv, None) for inv in pending.values())
    return pairs


def check_store(events):
    """The fenced store: it accepts a token no older than the newest it accepted before, and only
    refuses an older one. Where the operations name their writer (the holder's id, `writer` on the
    invoke), a token equal to the newest is the newest's writer's alone: the store must refuse it
    from another writer (a failover that handed one token to two holders), and may refuse only then.
    Returns (violations, stale refusals)."""
    ops = [p for f in ("read", "write") for p in completions(events, f) if p[1] is not None]
    accepted = sorted(((done, invoke.get("writer")) for invoke, done in ops if done["type"] == "ok"),
                      key=lambda a: a[0]["time"])
    by_invoke = sorted(ops, key=lambda p: p[0]["time"])
    invoke_times = [invoke["time"] for invoke, _ in by_invoke]
    running_max = list(itertools.accumulate((invoke["token"] for invoke, _ in by_invoke), max))
    asked_by = {}  # token -> [(invoke time, writer)] of the operations that carried it
    for invoke, _ in by_invoke:
        asked_by.setdefault(invoke["token"], []).append((invoke["time"], invoke.get("writer")))

    def newest_asked(before):  # the largest token of an operation invoked before `before`
        n = bisect.bisect_left(invoke_times, before)
        return running_max[n - 1] if n else -1

    def other_writer_asked(token, writer, before):  # the same token, from another writer, asked before
        return writer is not None and any(t < before and w is not None and w != writer
                                          for t, w in asked_by.get(token, ()))

    violations, refused, best, best_writer, i = [], 0, None, None, 0
    for invoke, done in by_invoke:
        while i < len(accepted) and accepted[i][0]["time"] < invoke["time"]:
            if best is None or accepted[i][0]["token"] > best["token"]:
                best, best_writer = accepted[i]
            i += 1
        newer = best is not None and best["token"] > done["token"]
        writer = invoke.get("writer")
        if done["type"] == "ok" and newer:
            violations.append(violation(
                "fencing", f"the store accepted a {done['f']} with token {done['token']} after it had accepted "
                f"token {best['token']}", best, invoke, done))
        elif (done["type"] == "ok" and best is not None and best["token"] == done["token"]
              and None not in (writer, best_writer) and writer != best_writer):
            violations.append(violation(
                "fencing", f"the store accepted a {done['f']} with token {done['token']} from {writer} after it "
                f"had accepted that token from {best_writer}", best, invoke, done))
        if done["type"] == "fail" and done.get("error") == "stale":
            refused += 1
            # Refusing is justified by any newer token the store may have seen: one asked for
            # (accepted or not) before this operation completed; or by the same token from another
            # writer, asked before.
            if (newest_asked(done["time"]) <= done["token"]
                    and not other_writer_asked(done["token"], writer, done["time"])):
                violations.append(violation(
                    "fencing", f"the store refused token {done['token']} as stale, but had seen no newer one",
                    invoke, done))
    return violations, refused


def check_register(events):
    """No lost update: acknowledged increments <= final register <= acknowledged + unknown."""
    writes = completions(events, "write")
    acked = [done for _, done in writes if done is not None and done["type"] == "ok"]
    unknown = sum(1 for _, done in writes if done is None or done["type"] == "info")
    violations, by_value = [], {}
    for w in acked:
        if w["value"] in by_value:
            violations.append(violation("lost update", f"two acknowledged writes both wrote {w['value']}",
                                        by_value[w["value"]], w))
        by_value.setdefault(w["value"], w)
    finals = [e for e in events if e.get("f") == "final-read" and e["type"] == "ok"]
    if not finals:
        return violations, len(acked), unknown, None
    final = finals[-1]
    value = final["value"]
    if value < len(acked):
        violations.append(violation("lost update", f"the register holds {value}, but {len(acked)} increments "
                                    "were acknowledged", final))
    elif value > len(acked) + unknown:
        violations.append(violation("lost update", f"the register holds {value}, more than the {len(acked)} "
                                    f"acknowledged and {unknown} unknown increments", final))
    return violations, len(acked), unknown, value


def paused_processes(events):
    """Each client process that a nemesis stopped (pause-client: SIGSTOP, then SIGCONT): process ->
    [(start, stop)]. A stop never recorded (the run ended first) lasts to the last event."""
    spans, open_, end = {}, {}, events[-1]["time"] if events else 0
    for e in events:
        if e.get("process") != "nemesis" or e.get("nemesis") != "pause-client":
            continue
        if e.get("f") == "start" and e.get("target"):
            open_[e.get("nemesis")] = (e["target"], e["time"])
        elif e.get("f") == "stop" and e.get("nemesis") in open_:
            target, start = open_.pop(e["nemesis"])
            spans.setdefault(target, []).append((start, e["time"]))
    for target, start in open_.values():
        spans.setdefault(target, []).append((start, end))
    return spans


def check_liveness(events, tolerance_ns):
    """Every waiter with a deadline acquired or gave up by then (plus the tolerance). A waiter whose
    own process was stopped (pause-client) could not act meanwhile: the time its process was stopped
    between its start and its end is allowed on top (a library client's other waiters share the
    stopped holder's process)."""
    violations, end = [], events[-1]["time"] if events else 0
    paused = paused_processes(events)
    for invoke, done in completions(events, "acquire"):
        deadline = invoke.get("deadline")
        if deadline is None:
            continue
        # An `info` acquire is an unknown outcome: the waiter ended then (deadbolt exited with an
        # error, e.g. a connection lost after the request was sent), unless it hung and was killed.
        hung = done is not None and done["type"] == "info" and str(done.get("error", "")).startswith("hung")
        finished = done["time"] if done is not None and not hung else None
        until = finished if finished is not None else end
        stopped = sum(max(0, min(stop, until) - max(start, invoke["time"]))
                      for start, stop in paused.get(invoke.get("process"), []))
        latest = deadline + stopped + tolerance_ns
        also = f"; its process was stopped {stopped / NS_PER_MS:.0f} ms meanwhile, allowed" if stopped else ""
        if finished is None and end > latest:
            violations.append(violation("liveness", f"{invoke['hold']}: the waiter never finished (deadline "
                                        f"{(deadline - invoke['time']) / NS_PER_MS:.0f} ms after it began{also})",
                                        *[e for e in (invoke, done) if e]))
        elif finished is not None and finished > latest:
            violations.append(violation("liveness", f"{invoke['hold']}: the waiter finished "
                                        f"{(finished - deadline) / NS_PER_MS:.0f} ms after its deadline{also}",
                                        invoke, done))
    return violations


def recoveries(events, grants):
    """Each heal (a nemesis "stop"): when it was, which nemesis, how long until the next grant (None:
    no grant after it), and until when the run could have shown one (the next fault's start, or the
    runner's "stopping", or the history's end)."""
    nemesis = [e for e in events if e.get("process") == "nemesis" and e["f"] in ("start", "stop")]
    stops = [e for e in events if e.get("process") == "runner" and e["f"] == "stopping"]
    end = stops[0]["time"] if stops else (events[-1]["time"] if events else 0)
    out = []
    for n, e in enumerate(nemesis):
        if e["f"] != "stop":
            continue
        i = bisect.bisect_left(grants, e["time"])
        following = [x["time"] for x in nemesis[n + 1:] if x["f"] == "start"]
        out.append({"heal": e["time"], "nemesis": e.get("nemesis"),
                    "recovery_ms": (grants[i] - e["time"]) / NS_PER_MS if i < len(grants) else None,
                    # the grant gap the heal fell in: how long nobody got the lock around this fault
                    "unavailable_ms": (grants[i] - grants[i - 1]) / NS_PER_MS if 0 < i < len(grants) else None,
                    "observable_until": min([end, *following[:1]])})
    return out


def check_recovery(heals, bound_ms):
    """Progress resumes within bound_ms after each heal: a grant by then, unless the next fault began,
    or the run was told to stop, before the bound ran out (then the history cannot tell)."""
    violations = []
    for h in heals:
        limit = h["heal"] + bound_ms * NS_PER_MS
        if h["observable_until"] < limit:
            continue
        if h["recovery_ms"] is None or h["recovery_ms"] > bound_ms:
            late = "no grant followed" if h["recovery_ms"] is None else f"the first grant came {h['recovery_ms']:.0f} ms after it"
            violations.append(violation("recovery", f"no progress within {bound_ms} ms of the heal of "
                                        f"{h['nemesis']}: {late}",
                                        {"time": h["heal"], "process": "nemesis", "f": "stop", "nemesis": h["nemesis"]}))
    return violations


def check_replica_sync(events):
    """With replica sync on, no acquire is reported done while no replica could acknowledge anything:
    one that began and ended inside a nemesis's `unreplicated` window (replication cut, from `begin`
    to `end`) was granted by the master alone, and is lost if a replica is promoted."""
    windows, begun = [], None
    for e in events:
        if e.get("f") == "unreplicated" and e.get("replica_sync", True):
            if e.get("phase") == "begin":
                begun = e
            elif begun is not None:
                windows.append((begun, e))
                begun = None
    if not windows:
        return []
    violations = []
    for invoke, done in completions(events, "acquire"):
        if done is None or done["type"] != "ok":
            continue
        for begin, end in windows:
            if begin["time"] <= invoke["time"] and done["time"] <= end["time"]:
                violations.append(violation(
                    "replica sync", f"{invoke['hold']} was reported acquired (token {done.get('token')}) "
                    f"{(done['time'] - begin['time']) / NS_PER_MS:.0f} ms into a cut of every replica's link, "
                    "which no replica could have acknowledged", begin, invoke, done))
    return violations


def check_progress(holds):
    """Every client process that was granted holds reached the resource under at least one of them.
    (Whether a run was granted anything at all is the campaign's question: a history of waiters that
    all gave up in time is valid.)"""
    violations, per_process = [], {}
    for h in holds.values():
        if h.granted:
            per_process.setdefault(h.process, []).append(h)
    for process, its in sorted(per_process.items()):
        if not any(e["f"] in ("read", "write", "work") for h in its for e in h.events):
            violations.append(violation("progress", f"{process} was granted {len(its)} holds and reached the "
                                        "resource under none of them", its[0].granted))
    return violations


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def partitions(events):
    """The history of each lock: a library client's workers may use several locks (each event of a
    hold carries its `lock`, and so does the final read of its register), and every check but the
    figures is about one lock. Events without a lock (the nemesis's, the runner's) belong to every
    lock; a history without lock fields (the CLI workload's one lock) is one partition, None."""
    locks = sorted({e["lock"] for e in events if e.get("lock") is not None})
    if not locks:
        return [(None, events)]
    # A multi lock's hold names all its locks ("locks": "a,b" on its acquire): it is checked with each.
    hold_locks = {}
    for e in events:
        if "hold" in e and e.get("locks"):
            hold_locks[e["hold"]] = set(e["locks"].split(","))
    locks = sorted(set(locks).union(*hold_locks.values()))

    def of(e):
        return hold_locks.get(e.get("hold")) or {e.get("lock")}
    shared = [e for e in events if e.get("lock") is None and "hold" not in e and e.get("f") != "final-read"]
    return [(lock, sorted([e for e in events if lock in of(e)] + shared, key=lambda e: e["time"]))
            for lock in locks]


def check_lock(events, tolerance_ns):
    """Every check over the history of one lock: (violations, unsafe windows, stale refusals,
    acknowledged writes, unknown writes, the final register)."""
    holds = holds_of(events)
    kinds = {h.kind for h in holds.values()}
    # A red lock's hold survives the loss of one server's state (a minority): a reset ends no hold.
    resets = [] if "red" in kinds else [e["time"] for e in events if e.get("f") == "reset"]
    if "semaphore" in kinds:
        exclusion, windows = check_permits(holds, resets), []
    elif "read-write" in kinds:
        exclusion, windows = check_mutual_exclusion(holds, resets, check="readers-writers")
    elif "fair" in kinds:
        exclusion, windows = check_mutual_exclusion(holds, resets)
        exclusion += check_fair_order(holds, events)
    else:
        exclusion, windows = check_mutual_exclusion(holds, resets)
    store, refused = check_store(events)
    register, acked, unknown, final = check_register(events)
    violations = (exclusion + check_tokens(holds) + store + register + check_liveness(events, tolerance_ns)
                  + check_replica_sync(events))
    return violations, windows, refused, acked, unknown, final


def check(events, tolerance_ms=1000, recovery_bound_ms=None):
    """Every check over one history: {"valid": bool, "violations": [...], "figures": {...}}.
    recovery_bound_ms: how soon after each heal a grant must come (None: measured, not checked)."""
    violations, windows, refused, acked, unknown, finals = [], [], 0, 0, 0, []
    for lock, part in partitions(events):
        v, w, r, a, u, final = check_lock(part, tolerance_ms * NS_PER_MS)
        if lock is not None:
            for x in v:
                x["lock"] = lock
                x["message"] = f"[{lock}] {x['message']}"
        violations += v
        windows += w
        refused += r
        acked += a
        unknown += u
        if final is not None:
            finals.append(final)
    holds = holds_of(events)
    acquires = completions(events, "acquire")
    latencies = [(done["time"] - inv["time"]) / NS_PER_MS for inv, done in acquires if done and done["type"] == "ok"]
    # Recovery: from each heal (a nemesis's "stop") to the next grant.
    heals = [e["time"] for e in events if e.get("process") == "nemesis" and e["f"] == "stop"]
    grants = sorted(h.start for h in holds.values() if h.granted)
    recovery = [(grants[i] - t) / NS_PER_MS for t in heals if (i := bisect.bisect_left(grants, t)) < len(grants)]
    heal_list = recoveries(events, grants)
    if recovery_bound_ms is not None:
        violations += check_recovery(heal_list, recovery_bound_ms)
    violations += check_progress(holds)
    # Unavailability: the longest stretch without a grant that a fault began in (from the last grant
    # before the fault's start to the first grant after it; a run without faults has none).
    starts = [e["time"] for e in events if e.get("process") == "nemesis" and e["f"] == "start"]
    unavailable = []
    for t in starts:
        i = bisect.bisect_left(grants, t)
        if 0 < i < len(grants):
            unavailable.append((grants[i] - grants[i - 1]) / NS_PER_MS)
    figures = {
        "faults": len(heals),
        "recovery_ms_max": max(recovery, default=None),
        "unavailable_ms_max": max(unavailable, default=None),
        "acquires": len(acquires),
        "holds": sum(1 for h in holds.values() if h.granted),
        "gave_up": sum(1 for _, done in acquires if done is not None and done["type"] == "fail"),
        "writes_acknowledged": acked,
        "writes_unknown": unknown,
        "stale_refused": refused,
        "register": sum(finals) if finals else None,
        "unsafe_windows": len(windows),
        "unsafe_ms_max": max((w["unsafe_ms"] for w in windows), default=0.0),
        "acquire_ms_p50": percentile(latencies, 0.50),
        "acquire_ms_p99": percentile(latencies, 0.99),
        "violations": len(violations),
    }
    return {"valid": not violations, "violations": violations, "unsafe_windows": windows, "figures": figures,
            "recoveries": heal_list}


def main(argv):
    parser = argparse.ArgumentParser(description="Check a recorded lock history.")
    parser.add_argument("history")
    parser.add_argument("--json", help="write the full result here")
    parser.add_argument("--tolerance-ms", type=int, default=1000, help="liveness: lateness allowed past a deadline")
    parser.add_argument("--recovery-bound-ms", type=int, help="recovery: a grant must follow each heal within this")
    args = parser.parse_args(argv)
    result = check(load(args.history), args.tolerance_ms, args.recovery_bound_ms)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    print(" ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in result["figures"].items()))
    for w in result["unsafe_windows"]:
        print(f"unsafe window: {w['holder']} worked {w['unsafe_ms']:.1f} ms past its lease, "
              f"while {', '.join(w['overlapped'])} held the lock")
    for v in result["violations"]:
        print(f"VIOLATION [{v['check']}] {v['message']}")
        for e in v["events"]:
            print("    " + json.dumps(e, sort_keys=True))
    return 0 if result["valid"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
