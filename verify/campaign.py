#!/usr/bin/env python3
"""Runs verification scenarios (topology x nemesis x workload), checks each history, writes the results.

Called by verify/run (which builds deadbolt and enters a private network namespace first):

    campaign.py --deadbolt PATH --out DIR [--seconds N] [--clients N] smoke|full|SCENARIO...

A scenario is TOPOLOGY:NEMESIS[:WORKLOAD] (`verify/run --list` prints them; the workload is `mutex`
unless named: `mutex-unfenced` is the same with a store that ignores the tokens). Each gets DIR/<scenario>/ with its
history (history.jsonl), the checker's result (result.json), the servers' files and the clients'
logs; DIR/summary.json and DIR/summary.md gather the figures. The exit status is 1 when a scenario's
verdict differs from what is expected of it (a topology known to be unsafe under a fault is expected to
show violations; every other scenario to show none), 2 for bad arguments.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "lib"), os.path.join(HERE, "workload")]

import checker  # noqa: E402
from fenced_register import fence_key_of, fence_token, register_of  # noqa: E402
from history import History  # noqa: E402
from library import LibraryClient  # noqa: E402
from mutex import MutexClient  # noqa: E402
from nemesis import NEMESES  # noqa: E402
from redlock import RedLockServers  # noqa: E402
from sync_nemesis import SYNC_NEMESES  # noqa: E402
from resp import Redis  # noqa: E402
from topology import TOPOLOGIES  # noqa: E402

# Where Redis locks cannot be safe, and the checker must say so: without persistence a restarted
# server forgets every lock and restarts the fencing counter, so tokens go backwards; and a paused
# holder whose resource does not check tokens overwrites its successor's work.
EXPECTED_UNSAFE = {"standalone:kill-server", "standalone:pause-client:mutex-unfenced"}

# Where Redis loses grants the lock acknowledged, so that fencing tokens come out again (the checker's
# "tokens" check), whatever the client does: a Sentinel failover promotes a replica that may lack the
# old master's last writes (replication is asynchronous, and `WAIT 1` is answered by the fastest
# replica, not necessarily the one promoted: a planned failover does not wait for the replica it
# promotes to catch up, and one that lagged 9.9 KB behind the other was promoted in
# sentinel:failover:mutex-lib-many), and a paused-master failover leaves the old master granting
# until the sentinels demote it. (A planned failover's old master granting between the promotion and
# the switch is no longer counted synced, issue 27: docs/replication.md.) These scenarios are as expected when every other
# check holds (no two holds overlap with live leases, the store refuses every stale token, no update
# is lost, every waiter is done in time): the repeated tokens are counted, not failed.
SENTINEL_FAILOVERS = ("failover", "kill-master", "pause-master", "silent-sentinel-failover")
TOLERATED = {f"sentinel:{n}": {"tokens"} for n in SENTINEL_FAILOVERS}
# A paused master wakes up a master and takes writes until the sentinels demote it, and its replica
# that was not promoted still answers its WAIT: a client that has not heard the switch yet (it is
# announced at the end of the failover) may take the lock there while another holds it on the new
# master. Redis Sentinel's split brain, whatever the client does; only fencing closes it.
TOLERATED["sentinel:pause-master"] = {"tokens", "mutual exclusion"}
# Without replica sync (deadbolt --replica-sync off) nothing protects a grant from a failover: a
# holder's hold may be missing on the promoted replica while it still works, and another client then
# holds the lock too (docs/replication.md). Fencing must still keep the store right.
TOLERATED.update({f"sentinel-sync-off:{n}": {"tokens", "mutual exclusion"} for n in SENTINEL_FAILOVERS})


# The nemeses added with the network and server faults (docs/verification.md, "Nemeses").
# A jump of the lock server's wall clock: Redis expires keys by it, so a hold ends early while its
# holder works within its lease, and a waiter that asks then takes the lock: no client can prevent
# it, only fencing keeps the resource right. Tolerated, not expected: with short holds no waiter may
# ask within the shortened hold (waiters wait for the release message or the TTL they were told).
TOLERATED["standalone:clock-jump"] = {"mutual exclusion"}
# A master cut from its replicas and sentinels (or its cluster peers) while clients still reach it:
# the classic split brain, as a paused master's.
TOLERATED.update({f"{t}:partition-master": {"tokens", "mutual exclusion"}
                  for t in ("sentinel", "sentinel-sync-off", "cluster")})
# A forced cluster failover does not wait for the replica to catch up, and the old master serves
# until it hears of the new epoch; a paused cluster master wakes up a master for a moment.
TOLERATED.update({f"cluster:{n}": {"tokens", "mutual exclusion"}
                  for n in ("failover-force", "failover-takeover", "pause-master")})

# How soon after each heal a grant must come (the checker's "recovery" check): a standalone server is
# back at once, and a waiter's retry follows within a lease; a failover's heal is when the new master
# is named, and clients must then find it (Sentinel: a sentinel's answer, a watch; Cluster: MOVED).
RECOVERY_BOUND_MS = {"default": 3000, **{n: 6000 for n in (
    "failover", "kill-master", "pause-master", "silent-sentinel-failover", "partition-master",
    "failover-force", "failover-takeover", "migrate-slot")}}


def recovery_bound_ms(nemesis_name):
    return RECOVERY_BOUND_MS.get(nemesis_name, RECOVERY_BOUND_MS["default"])


def in_full(topology, nemesis):
    """Whether `full` runs the pair: the persistence variants with the process faults only, sync off
    with the faults replica sync is about, and not every network fault on every topology."""
    if topology.startswith("standalone-aof"):
        return nemesis in ("none", "pause-server", "kill-server", "pause-client")
    if topology == "sentinel-sync-off":
        return nemesis in ("failover", "kill-master", "pause-master", "partition-master")
    if topology == "sentinel":
        return nemesis not in ("loss", "partition-reject", "delay", "client-clock")
    if topology == "cluster":
        return nemesis not in ("loss", "partition-reject", "client-pause", "delay", "client-clock")
    return True


def client_deadbolt(topology, nemesis_name, deadbolt):
    """The deadbolt the clients run: a nemesis may wrap it (client-clock: under libfaketime)."""
    wrap = getattr(NEMESES.get(nemesis_name), "wrap_clients", None)
    return wrap(topology, deadbolt) if wrap else deadbolt


def prepare(topology, nemesis_name):
    """What a nemesis needs of the servers before they start (their own uids, a debug command, a
    clock shim)."""
    hook = getattr(NEMESES.get(nemesis_name), "prepare", None)
    if hook:
        hook(topology)


NEMESES.update(SYNC_NEMESES)
# The red lock's servers are standalone servers: the nemeses of one server (the first: a minority)
# and of a client act on them too.
TOPOLOGIES.update({f"redlock-{n}": (lambda d, n=n: RedLockServers(d, n)) for n in (3, 5)})
for _name in ("pause-server", "kill-server", "pause-client"):
    NEMESES[_name].kinds = NEMESES[_name].kinds | {"redlock"}

# The library workloads (verify/client, verify/workload/library.py): a few client processes, each one
# deadbolt client with several workers, through the blocking or the async API. `mutex-lib` and
# `mutex-lib-async`: every worker on one lock, the watchdog's lease (3 s, renewed every second).
# `mutex-lib-many`: issue 25's defect 2 setting, eight workers per client each on a lock of its own
# (`verify-mutex-<client>-<worker>`) and thinking up to 1 s between holds, so that a fault finds many
# acquires of free locks in flight on one connection at once.
LIBRARY_WORKLOADS = {
    "mutex-lib": dict(processes=2, api="blocking", workers=4, locks=1, increments=2),
    "mutex-lib-async": dict(processes=2, api="async", workers=4, locks=1, increments=2),
    # The library's default command timeout (3 s), as in issue 25: with 1 s, no more than the
    # `WAIT`'s own timeout, 74dc84a drops the connection at the first WAIT and the acquires fail as
    # unknown instead of being verified and reported acquired (1 such run: nothing found).
    "mutex-lib-many": dict(processes=2, api="blocking", workers=8, locks=8, increments=2, think_ms=1000,
                           own_locks=True, command_timeout_ms=3000),
    # The other kinds (blocking API, no register): a semaphore of 2 permits among 6 workers (at most 2
    # holders at once), a read/write lock whose workers write one time in three (readers share).
    "semaphore-lib": dict(processes=2, api="blocking", workers=3, locks=1, kind="semaphore", permits=2,
                          lock_name="verify-semaphore", think_ms=100),
    "rw-lib": dict(processes=2, api="blocking", workers=3, locks=1, kind="read-write", increments=2,
                   lock_name="verify-rw", think_ms=100),
    # A red lock over the redlock-N topologies' servers (a majority held counts).
    "redlock-lib": dict(processes=2, api="blocking", workers=3, locks=1, kind="red", increments=1,
                        lock_name="verify-red", think_ms=100),
    # A multi lock over verify-multi-a and -b (even workers) beside holders of one of them (odd).
    "multi-lib": dict(processes=2, api="blocking", workers=4, locks=1, kind="multi", increments=1,
                      lock_name="verify-multi", think_ms=100),
    # A fair lock: granted in arrival order when nothing fails (the checker's `fair order`).
    "fair-lib": dict(processes=2, api="blocking", workers=3, locks=1, kind="fair", increments=1,
                     lock_name="verify-fair", think_ms=100),
}
LIBRARY_LIVENESS_TOLERANCE_MS = 2000
LIBRARY_SCENARIOS = ["standalone:pause-client:mutex-lib", "standalone:pause-server:mutex-lib-async",
                     "sentinel:kill-master:mutex-lib", "sentinel:cut-replicas-kill-master:mutex-lib-many",
                     "sentinel:failover:mutex-lib",  # issue 27: two holders on the old and the new master
                     "cluster:failover:mutex-lib-async", "standalone:pause-client:semaphore-lib",
                     "standalone:pause-client:rw-lib", "sentinel:kill-master:rw-lib", "standalone:none:fair-lib",
                     "standalone:pause-client:fair-lib", "standalone:none:multi-lib",
                     "standalone:pause-client:multi-lib", "redlock-3:pause-server:redlock-lib",
                     "redlock-3:kill-server:redlock-lib", "redlock-5:kill-server:redlock-lib"]
# The replica-sync nemesis kills a master: its failover repeats tokens as kill-master's does (tolerated),
# but an acquire reported done while no replica could acknowledge it (the `replica sync` check: issue
# 25, defect 2) is not.
TOLERATED["sentinel:cut-replicas-kill-master"] = {"tokens"}


def tolerated_of(scenario):
    """The checks whose violations a scenario tolerates; a workload other than the CLI's mutex
    tolerates what the same topology and nemesis do."""
    return TOLERATED.get(scenario) or TOLERATED.get(":".join(scenario.split(":")[:2]), set())


def as_expected(scenario, result):
    if any(v["check"] == "progress" for v in result["violations"]):
        return False  # a workload that did nothing cannot show what it is expected to show
    if scenario in EXPECTED_UNSAFE:
        return not result["valid"]
    tolerated = tolerated_of(scenario)
    return all(v["check"] in tolerated for v in result["violations"])

# CI's: the CLI workload under both standalone nemeses, and the library workload (verify_client)
# under the paused client, whose lease-lost signals and unsafe windows it records.
SMOKE = ["standalone:pause-server", "standalone:pause-client", "standalone:pause-client:mutex-lib"]


def applies(topology, nemesis):
    """Whether the nemesis can act on the topology (a failover needs replicas; pausing a client, none)."""
    kind = topology.split("-")[0]  # standalone-aof-always: standalone; sentinel-sync-off: sentinel
    return nemesis == "none" or kind in NEMESES[nemesis].kinds


# Every applicable pair that in_full() keeps (the replica-sync nemesis and the red lock's servers:
# library scenarios only), and the library scenarios.
ALL = ([f"{t}:{n}" for t in TOPOLOGIES for n in ["none", *NEMESES] if applies(t, n) and in_full(t, n)
        and n not in SYNC_NEMESES and not t.startswith("redlock")]
       + ["standalone:pause-client:mutex-unfenced"] + LIBRARY_SCENARIOS)
WORKLOADS = {"mutex": True, "mutex-unfenced": False}  # whether the store is given the fencing token
WORKLOADS.update({w: True for w in LIBRARY_WORKLOADS})

LEASE_MS = 1500   # fixed lease: the checker knows when a hold may end
WAIT_MS = 6000    # each waiter's deadline
HEAL_SECONDS = 2  # between two faults


def valid_scenario(scenario):
    parts = scenario.split(":")
    return (len(parts) in (2, 3) and parts[0] in TOPOLOGIES and parts[1] in ("none", *NEMESES)
            and applies(parts[0], parts[1]) and (len(parts) == 2 or parts[2] in WORKLOADS)
            # the red lock's workload needs several independent servers
            and (len(parts) == 2 or (parts[2] == "redlock-lib") == parts[0].startswith("redlock")))


def make_workers(workload, history, topology, directory, deadbolt, library_client, clients):
    """The workload's clients: `deadbolt run` threads, or verify_client processes."""
    if workload in LIBRARY_WORKLOADS:
        spec = dict(LIBRARY_WORKLOADS[workload])
        processes = clients or spec.pop("processes")
        spec.pop("processes", None)
        sync = "off" if "--replica-sync" in getattr(topology, "cli_args", []) else "auto"
        own_locks = spec.pop("own_locks", False)
        base = spec.pop("lock_name", "verify-mutex")
        if spec.get("kind") == "red":
            spec["red_urls"] = topology.red_urls()
        return [LibraryClient(f"l{i + 1}", library_client, history, topology.url(i), topology.store.port, directory,
                              wait_ms=WAIT_MS, replica_sync=sync,
                              lock_name=f"{base}-l{i + 1}" if own_locks else base, **spec)
                for i in range(processes)]
    lock_ports = [s.port for s in topology.servers]
    clients = clients or getattr(topology, "clients", 4)
    return [MutexClient(f"c{i + 1}", deadbolt, history, topology.url(i), lock_ports, topology.store.port,
                        directory, lease_ms=LEASE_MS, wait_ms=WAIT_MS, fenced=WORKLOADS[workload],
                        global_args=getattr(topology, "cli_args", []))
            for i in range(clients)]


def run_scenario(scenario, deadbolt, out, seconds, clients, library_client=None):
    topology_name, nemesis_name, workload = (scenario.split(":") + ["mutex"])[:3]
    if workload in LIBRARY_WORKLOADS and not library_client:
        raise SystemExit(f"campaign: {scenario} needs --library-client (verify/run builds verify_client)")
    directory = base = os.path.join(out, scenario.replace(":", "_"))
    n = 1
    while os.path.exists(directory):  # the same scenario run again: a folder of its own
        n += 1
        directory = f"{base}.{n}"
    os.makedirs(directory)
    topology = TOPOLOGIES[topology_name](directory)
    prepare(topology, nemesis_name)
    try:
        topology.start()  # a Sentinel group or a cluster takes seconds to form: Ctrl-C may come now
    except BaseException:
        topology.stop()
        raise
    path = os.path.join(directory, "history.jsonl")
    history = History(path)
    history.event("runner", "info", "scenario", scenario=scenario, lease_ms=LEASE_MS, wait_ms=WAIT_MS,
                  **topology.describe())
    deadbolt = client_deadbolt(topology, nemesis_name, deadbolt)
    try:
        workers = make_workers(workload, history, topology, directory, deadbolt, library_client, clients)
    except BaseException:
        topology.stop()
        raise
    # A fault sized by the lease (a client paused longer than it) uses the workload's: the library
    # workload's watchdog lease, or the CLI's fixed one.
    lease_ms = getattr(workers[0], "effective_lease_ms", LEASE_MS)
    nemesis = NEMESES[nemesis_name](topology=topology, clients=workers, lease_ms=lease_ms) if nemesis_name != "none" else None
    stopping = threading.Event()

    bound_ms = recovery_bound_ms(nemesis_name)

    def schedule():
        # The heal phase lasts at least the recovery bound, so that the check can see every heal.
        while not stopping.wait(max(HEAL_SECONDS, bound_ms / 1000)):
            nemesis.fault(history, stopping)

    scheduler = threading.Thread(target=schedule, daemon=True) if nemesis else None
    started = time.monotonic()
    try:
        for w in workers:
            w.start()
        if scheduler:
            scheduler.start()
        time.sleep(seconds)
    finally:
        stopping.set()
        history.event("runner", "info", "stopping")  # heals after this are not held to the bound
        if scheduler:
            scheduler.join()
            nemesis.heal()
        for w in workers:
            w.stop()
        for w in workers:
            w.join()
        try:
            stats = final_read(history, topology.store.port,
                               list(dict.fromkeys(n for w in workers for n in getattr(w, "lock_names", [None]))))
        finally:  # a final read that fails (an unreadable fence) must not leave the servers running
            history.close()
            topology.stop()
    # How late past its wait a waiter may end: an attempt in flight at its deadline is answered, or
    # given up, within deadbolt's command timeout (1 s), plus 1 s for process start-up and thread
    # scheduling on a loaded machine. Topologies with replica sync allow for its WAIT too.
    tolerance_ms = max(getattr(topology, "liveness_tolerance_ms", 2000),
                       getattr(NEMESES.get(nemesis_name), "liveness_tolerance_ms", 0),
                       LIBRARY_LIVENESS_TOLERANCE_MS if workload in LIBRARY_WORKLOADS else 0)
    result = checker.check(checker.load(path), tolerance_ms, bound_ms if nemesis else None)
    if result["figures"]["holds"] == 0:  # a run that was granted nothing proves nothing
        result["violations"].append(checker.violation(
            "progress", f"no hold was granted in the whole run ({result['figures']['acquires']} acquires)"))
        result["figures"]["violations"] += 1
        result["valid"] = False
    result["liveness_tolerance_ms"] = tolerance_ms
    result["recovery_bound_ms"] = bound_ms if nemesis else None
    result["scenario"] = scenario
    result["folder"] = os.path.basename(directory)
    result["clients"] = len(workers)
    result["seconds"] = round(time.monotonic() - started, 1)
    result["store"] = stats
    result["expected"] = ("violations" if scenario in EXPECTED_UNSAFE else
                          "valid" + "".join(f", {c} tolerated" for c in sorted(tolerated_of(scenario))))
    result["as_expected"] = as_expected(scenario, result)
    with open(os.path.join(directory, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    return result


def final_read(history, store_port, locks):
    """Each lock's register after every client stopped (None: the CLI workload's one lock, whose
    events carry no lock), and the newest token its fence accepted."""
    fences = {}
    with Redis(store_port) as r:
        for lock in locks:
            key = register_of(lock)
            value = int(r.call("GET", key) or 0)
            fences[key] = fence_token(r.call("GET", fence_key_of(key)))
            history.event("runner", "ok", "final-read", value=value, **({"lock": lock} if lock else {}))
    return {"newest_token_accepted": fences}


def by_check(r):
    """"fencing 12, lost update 1": the violations counted per check."""
    counts = {}
    for v in r["violations"]:
        counts[v["check"]] = counts.get(v["check"], 0) + 1
    return ", ".join(f"{check} {n}" for check, n in sorted(counts.items()))


def summary_line(r):
    f = r["figures"]
    verdict = "ok" if r["as_expected"] else "UNEXPECTED"
    checks = f" ({by_check(r)})" if r["violations"] else ""
    return (f"{r['scenario']:<36} {verdict:<10} violations={f['violations']}{checks} holds={f['holds']} "
            f"writes={f['writes_acknowledged']} stale_refused={f['stale_refused']} "
            f"unsafe_windows={f['unsafe_windows']} (max {f['unsafe_ms_max']:.0f} ms) "
            f"acquire p50/p99={fmt(f['acquire_ms_p50'])}/{fmt(f['acquire_ms_p99'])} ms "
            f"unavailable max={fmt(f['unavailable_ms_max'])} ms")


def fmt(ms):
    return "-" if ms is None else f"{ms:.0f}"


def summary_markdown(results, meta):
    lines = [f"deadbolt: `{meta['deadbolt']}` ({meta['source']}); {meta['clients'] or '4 (Sentinel 8)'} clients, "
             f"{meta['seconds']:g} s per scenario, lease {LEASE_MS} ms, wait {WAIT_MS} ms", "",
             "| scenario | verdict | violations | faults | acquires | holds | gave up | writes acked | unknown "
             "| stale refused | unsafe windows (max ms) | acquire p50 / p99 ms | unavailable max ms | recovery max ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        f = r["figures"]
        verdict = ("valid" if r["valid"] else "violations (UNEXPECTED)" if not r["as_expected"]
                   else "violations (expected)" if r["scenario"] in EXPECTED_UNSAFE else "known limit only")
        checks = f" ({by_check(r)})" if r["violations"] else ""
        lines.append(f"| {r['scenario']} | {verdict} | {f['violations']}{checks} | {f['faults']} | {f['acquires']} "
                     f"| {f['holds']} | {f['gave_up']} | {f['writes_acknowledged']} | {f['writes_unknown']} "
                     f"| {f['stale_refused']} | {f['unsafe_windows']} ({f['unsafe_ms_max']:.0f}) "
                     f"| {fmt(f['acquire_ms_p50'])} / {fmt(f['acquire_ms_p99'])} | {fmt(f['unavailable_ms_max'])} "
                     f"| {fmt(f['recovery_ms_max'])} |")
    return "\n".join(lines) + "\n"


def publish_report(out):
    """`full` regenerates the results part of docs/verification.md and its pictures (report.py)."""
    import report
    try:
        report.publish(out, os.path.join(os.path.dirname(HERE), "docs"))
    except (OSError, SystemExit) as e:
        print(f"verify: the report was not written: {e}", file=sys.stderr)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deadbolt", required=True, help="the deadbolt CLI to test")
    parser.add_argument("--source", default="?", help="where that build comes from (for the report)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, help="length of each scenario (smoke 25, full 30, otherwise 60)")
    parser.add_argument("--clients", type=int, help="client processes (default 4; Sentinel 8)")
    parser.add_argument("--library-client", help="verify_client (verify/client) built against that deadbolt")
    parser.add_argument("--list", action="store_true", help="list the scenarios")
    parser.add_argument("scenarios", nargs="*")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(s + ("  (expected to show violations)" if s in EXPECTED_UNSAFE else
                               f"  ({', '.join(sorted(tolerated_of(s)))} violations tolerated)" if tolerated_of(s) else "")
                          for s in ALL))
        print(f"(any TOPOLOGY:NEMESIS[:WORKLOAD]: topologies {', '.join(TOPOLOGIES)}; nemeses none, "
              f"{', '.join(NEMESES)}; workloads {', '.join(WORKLOADS)})")
        return 0
    if not args.scenarios:
        parser.error("name smoke, full or scenarios (--list)")
    scenarios = []
    for s in args.scenarios:
        scenarios += SMOKE if s == "smoke" else ALL if s == "full" else [s]
    unknown = [s for s in scenarios if not valid_scenario(s)]
    if unknown:
        parser.error(f"unknown scenario {', '.join(unknown)} (--list prints them)")
    # full: 30 s each keeps its 64 scenarios (with their set-up and settling) within the 40 min target.
    seconds = args.seconds or (25 if args.scenarios == ["smoke"] else 30 if "full" in args.scenarios else 60)
    # SIGTERM and SIGHUP (a CI timeout, a closed terminal) unwind like Ctrl-C: every scenario's
    # `finally` stops the servers and clients it started.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    began = time.monotonic()
    os.makedirs(args.out, exist_ok=True)
    meta = {"deadbolt": args.deadbolt, "source": args.source, "clients": args.clients, "seconds": seconds}
    results = []
    for scenario in scenarios:
        result = run_scenario(scenario, args.deadbolt, args.out, seconds, args.clients, args.library_client)
        results.append(result)
        print(summary_line(result), flush=True)
        for v in result["violations"][:5]:
            print(f"    VIOLATION [{v['check']}] {v['message']}", flush=True)
    meta.update(wall_seconds=round(time.monotonic() - began), lease_ms=LEASE_MS, wait_ms=WAIT_MS)
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "results": [{k: r[k] for k in ("scenario", "folder", "valid", "as_expected", "figures",
                                                                "store", "seconds", "clients")} for r in results]}, f, indent=1)
    with open(os.path.join(args.out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(summary_markdown(results, meta))
    print(f"verify: {time.monotonic() - began:.0f} s; summary in {os.path.join(args.out, 'summary.md')}")
    if "full" in args.scenarios:
        publish_report(args.out)
    return 0 if all(r["as_expected"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
