"""Nemeses of the replicated topologies (Sentinel, Cluster): failovers, planned and forced.

Each waits first until the topology is whole again (`settle()`: the previous fault's old master
demoted and in sync), so that every fault starts from the same state; a topology that does not get
there in time skips the fault and says so in the history.

- `failover` (planned): Sentinel: `SENTINEL FAILOVER` to a sentinel; Cluster: `CLUSTER FAILOVER` to a
  replica of the master that owns the lock's slot. A planned Sentinel failover leaves the old master a
  writable master until the sentinels demote it (about 10 s here); a manual cluster failover stops
  the old master's clients until the replica has caught up and taken over.
- `kill-master`: SIGKILL the master (Cluster: the lock slot's), wait until the others promote a
  replica, and restart the old one after 1 s, as a replica (Sentinel: of the new master; Cluster: it
  learns it from the cluster). Without persistence it comes back empty, or with the RDB of its last
  full sync if it had been a replica, and resyncs. Never before a replica took over (also when the
  run ends mid-failover): as the master again it would serve that stale copy.
- `pause-master`: SIGSTOP the master (Cluster: the lock slot's) until the others have promoted a
  replica, then SIGCONT it: it wakes up a master, writable, until it learns it was replaced (Sentinel:
  until the sentinels demote it; the split-brain window).
- `silent-sentinel-failover` (Sentinel): SIGSTOP sentinel 1 (clients 1, 4 and 7 list it first), 0.5 s
  later `SENTINEL FAILOVER` through sentinel 2, SIGCONT sentinel 1 8 s after it was paused: clients
  that watch sentinel 1 do not hear the switch from it (issue 25, defect 1)."""
import signal
import threading
import time

from cluster import ask
from sentinel import MASTER_NAME

PROMOTION_SECONDS = 15  # how long a failover may take before the nemesis gives up waiting for it


def current_master(topology):
    if topology.kind == "sentinel":
        return topology.master()
    return topology.slot_owner()[0]


def lock_master(topology):
    """The server the clients' lock lives on now (a standalone topology's only one)."""
    return topology.lock if topology.kind == "standalone" else current_master(topology)


def wait_for_new_master(topology, old, stopping, seconds=PROMOTION_SECONDS):
    """The master that replaced `old` (None after `seconds`)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stopping.is_set():
        master = current_master(topology)
        if master is not None and master is not old:
            return master
        time.sleep(0.05)
    return None


class _Failover:
    kinds = {"sentinel", "cluster"}

    def __init__(self, topology, **_):
        self.topology = topology

    def begin(self, history, stopping):
        """Waits until the topology is whole; returns its master, or None (the fault is skipped)."""
        settled = self.topology.settle(stopping=stopping)
        if settled and self.topology.kind == "sentinel":
            # Whole, and then whole again 3 s later: sentinels tell each other a new configuration
            # in their hello messages (every 2 s). A failover asked of one sentinel right after the
            # old master's demotion found another still on the old view: it turned the newly
            # promoted master into a replica, and the sentinels named a replica master for 25 s.
            settled = not stopping.wait(3) and self.topology.settle(stopping=stopping)
        if stopping.is_set():
            return None
        if not settled:
            history.event("nemesis", "info", "skip", nemesis=self.name, note="the topology did not settle in time")
            return None
        return current_master(self.topology)


class Failover(_Failover):
    name = "failover"

    def __init__(self, topology, **kw):
        super().__init__(topology, **kw)
        self.turn = 0

    def fault(self, history, stopping):
        old = self.begin(history, stopping)
        if old is None:
            return
        if self.topology.kind == "sentinel":
            sentinel = self.topology.sentinels[self.turn % len(self.topology.sentinels)]
            self.turn += 1
            history.event("nemesis", "info", "start", nemesis=self.name, target=f"master {old.port}",
                          via=f"sentinel {sentinel.port}")
            reply = sentinel.ask("SENTINEL", "FAILOVER", MASTER_NAME, timeout=2)
        else:
            replica = self.topology.slot_owner()[1][0]
            history.event("nemesis", "info", "start", nemesis=self.name, target=f"master {old.port}",
                          via=f"replica {replica.port}")
            reply = ask(replica.port, "CLUSTER", "FAILOVER", timeout=2)
        new = wait_for_new_master(self.topology, old, stopping) if reply == "OK" else None
        history.event("nemesis", "info", "stop", nemesis=self.name, reply=str(reply),
                      new_master=new.port if new else None)

    def heal(self):
        pass


class KillMaster(_Failover):
    name = "kill-master"

    def __init__(self, topology, **kw):
        super().__init__(topology, **kw)
        self.killed = None

    def fault(self, history, stopping):
        old = self.begin(history, stopping)
        if old is None:
            return
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"master {old.port}")
        old.kill()
        self.killed = old
        new = wait_for_new_master(self.topology, old, stopping)
        stopping.wait(1)
        self.restart(new)
        history.event("nemesis", "info", "stop", nemesis=self.name, new_master=new.port if new else None)

    def restart(self, new_master):
        old, self.killed = self.killed, None
        if old is None or old.running:
            return
        if self.topology.kind == "sentinel":
            # As a replica of the new master (a master without persistence would come back empty,
            # and writable until the sentinels demote it).
            extra = old.extra
            if "--replicaof" in extra:
                i = extra.index("--replicaof")
                del extra[i:i + 3]
            if new_master is not None:
                extra += ["--replicaof", "127.0.0.1", str(new_master.port)]
        old.start()

    def heal(self):
        # The run ended while the others had not promoted a replica yet: wait for that (bounded) before
        # the restart. A killed node that had been a replica keeps the RDB of its last full sync
        # (dump.rdb); restarted while still the slot's master it serves that stale copy, and hands out
        # fencing tokens again (seen once at the end of a cluster:kill-master run: token 60 twice).
        new = None
        if self.killed is not None and not self.killed.running:
            new = wait_for_new_master(self.topology, self.killed, threading.Event())
        self.restart(new if new is not None else current_master(self.topology))


class PauseMaster(_Failover):
    name = "pause-master"
    kinds = {"sentinel", "cluster"}

    def __init__(self, topology, **kw):
        super().__init__(topology, **kw)
        self.paused = None

    def fault(self, history, stopping):
        old = self.begin(history, stopping)
        if old is None:
            return
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"master {old.port}")
        old.signal(signal.SIGSTOP)
        self.paused = old
        new = wait_for_new_master(self.topology, old, stopping)
        stopping.wait(0.5)
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name, new_master=new.port if new else None)

    def heal(self):
        if self.paused:
            self.paused.signal(signal.SIGCONT)
            self.paused = None


class SilentSentinelFailover(_Failover):
    name = "silent-sentinel-failover"
    kinds = {"sentinel"}
    SILENT_SECONDS = 8

    def fault(self, history, stopping):
        old = self.begin(history, stopping)
        if old is None:
            return
        silent, via = self.topology.sentinels[0], self.topology.sentinels[1]
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"sentinel {silent.port}",
                      seconds=self.SILENT_SECONDS)
        paused_at = time.monotonic()
        silent.signal(signal.SIGSTOP)
        self.topology.paused_sentinels.add(silent)
        stopping.wait(0.5)
        reply = via.ask("SENTINEL", "FAILOVER", MASTER_NAME, timeout=2)
        new = wait_for_new_master(self.topology, old, stopping) if reply == "OK" else None
        history.event("nemesis", "info", "failover", nemesis=self.name, via=f"sentinel {via.port}",
                      reply=str(reply), old_master=old.port, new_master=new.port if new else None)
        stopping.wait(max(0.0, paused_at + self.SILENT_SECONDS - time.monotonic()))
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name)

    def heal(self):
        for sentinel in list(self.topology.paused_sentinels):
            sentinel.signal(signal.SIGCONT)
            self.topology.paused_sentinels.discard(sentinel)
