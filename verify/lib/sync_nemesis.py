"""A nemesis for replica sync (docs/replication.md; issue 25, defect 2): grants made while no replica
can acknowledge them, then lost in a failover.

- `pause-replicas-kill-master` (Sentinel): SIGSTOP both replicas, so that every `WAIT 1` waits its full
  timeout and answers 0; 5 s later SIGKILL the master and SIGCONT the replicas: the sentinels promote
  one, which has none of what the master took during the pause. A client that reported a lock
  acquired in those 5 s (no replica had it) has lost it, and its fencing token is handed out again
  on the new master: the checker's `tokens` check, and `mutual exclusion` when the holder is still at
  work when another client takes the lock there. With replica sync working, every acquire in the pause
  is undone and tried again, and fails after its retries (docs/replication.md: up to 18 s for eight
  acquires on one connection): the waiters' liveness bound here allows for that."""
import signal

from failover import KillMaster, wait_for_new_master

PAUSE_SECONDS = 5


class PauseReplicasKillMaster(KillMaster):
    name = "pause-replicas-kill-master"
    kinds = {"sentinel"}
    # docs/replication.md: an acquire that can never be synced gives up after 9-13 s, and up to 5 s
    # more when several wait together: past a 6 s wait, up to 12 s; and 1 s for process start-up.
    liveness_tolerance_ms = 13000

    def __init__(self, topology, **kw):
        super().__init__(topology, **kw)
        self.paused = []

    def fault(self, history, stopping):
        old = self.begin(history, stopping)
        if old is None:
            return
        replicas = [s for s in self.topology.servers if s is not old]
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"replicas {', '.join(str(r.port) for r in replicas)}",
                      seconds=PAUSE_SECONDS)
        for replica in replicas:
            replica.signal(signal.SIGSTOP)
        self.paused = replicas
        stopping.wait(PAUSE_SECONDS)
        history.event("nemesis", "info", "kill", nemesis=self.name, target=f"master {old.port}")
        old.kill()
        self.killed = old
        self.resume()
        new = wait_for_new_master(self.topology, old, stopping)
        stopping.wait(1)
        self.restart(new)
        history.event("nemesis", "info", "stop", nemesis=self.name, new_master=new.port if new else None)

    def resume(self):
        for replica in self.paused:
            replica.signal(signal.SIGCONT)
        self.paused = []

    def heal(self):
        self.resume()
        super().heal()


SYNC_NEMESES = {n.name: n for n in (PauseReplicasKillMaster,)}
