"""A nemesis for replica sync (docs/replication.md; issue 25, defect 2): grants made while no replica
can acknowledge them, then lost in a failover.

- `cut-replicas-kill-master` (Sentinel): cut the master's replication links (an iptables DROP of what
  the master sends on each replica's connection, found by `CLIENT LIST TYPE replica`), so that every
  `WAIT 1` waits its full timeout and answers 0 and no replica gets anything; 12 s later SIGKILL the
  master: the sentinels promote a replica, which has none of what the master took meanwhile, and the
  cut is healed once they have. A client that reported a lock acquired in those 12 s has lost it, and
  its fencing token is handed out again on the new master: the checker's `tokens` check (and `mutual
  exclusion`, when the holder is still at work while another client takes the lock there). With
  replica sync working, every acquire in the cut is undone and tried again, and fails after its
  retries (docs/replication.md: up to 18 s for eight acquires on one connection); the waiters'
  liveness bound allows for that.

Pausing the replicas (SIGSTOP) instead would not lose anything: what the master sent waits in the
paused replica's socket buffer, and the replica applies it as soon as it runs again. The DROP rules
live in the campaign's private network namespace (verify/run, as root); without one the nemesis
skips every fault and says so."""
import re
import shutil
import subprocess
import threading

from failover import KillMaster, wait_for_new_master
from resp import Redis, RedisError

CUT_SECONDS = 12


def replica_link_ports(master_port):
    """The local ports of the replicas' connections to the master (CLIENT LIST TYPE replica)."""
    try:
        with Redis(master_port, timeout=1.0) as r:
            listing = r.call("CLIENT", "LIST", "TYPE", "replica")
    except (OSError, RedisError):
        return []
    return [int(port) for port in re.findall(r"(?:^| )addr=127\.0\.0\.1:(\d+)", listing or "", re.M)]


def iptables(action, master_port, replica_port):
    rule = ["OUTPUT", "-p", "tcp", "--sport", str(master_port), "--dport", str(replica_port), "-j", "DROP"]
    return subprocess.run(["iptables", action, *rule], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


class CutReplicasKillMaster(KillMaster):
    name = "cut-replicas-kill-master"
    kinds = {"sentinel"}
    # docs/replication.md: an acquire that can never be synced gives up after 9-13 s, and up to 5 s
    # more when several wait together: past a 6 s wait, up to 12 s; and 1 s for process start-up.
    liveness_tolerance_ms = 13000

    def __init__(self, topology, **kw):
        super().__init__(topology, **kw)
        self.cut = []  # (master port, replica link port) pairs dropped

    def fault(self, history, stopping):
        old = self.begin(history, stopping)
        if old is None:
            return
        ports = replica_link_ports(old.port)
        if not shutil.which("iptables") or not ports:
            history.event("nemesis", "info", "skip", nemesis=self.name,
                          note="no iptables (needs root: verify/run's network namespace)" if ports else "no replica links")
            stopping.wait(5)
            return
        for port in ports:
            if iptables("-A", old.port, port):
                self.cut.append((old.port, port))
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"master {old.port} -> replica links {ports}",
                      seconds=CUT_SECONDS)
        # From here until the master dies no replica can acknowledge anything: an acquire that begins
        # and is reported done in between was not synced (the checker's `replica sync` check).
        synced = "--replica-sync" not in getattr(self.topology, "cli_args", [])
        history.event("nemesis", "info", "unreplicated", phase="begin", replica_sync=synced)
        if stopping.wait(CUT_SECONDS):  # the scenario ends: no failover half done at the end
            self.heal_cut()
            return history.event("nemesis", "info", "stop", nemesis=self.name, note="stopped before the kill")
        old.kill()
        history.event("nemesis", "info", "unreplicated", phase="end", replica_sync=synced, killed=f"master {old.port}")
        self.killed = old
        # Waited for even when the scenario stops meanwhile: restarting the old master before a
        # replica is promoted would bring it back an empty master that the sentinels still name.
        new = wait_for_new_master(self.topology, old, threading.Event())
        # Healed only now: the promoted replica has closed its link to the old master, so what the
        # dead master's socket still retransmits is refused, not applied.
        self.heal_cut()
        stopping.wait(1)
        self.restart(new)
        history.event("nemesis", "info", "stop", nemesis=self.name, new_master=new.port if new else None)

    def heal_cut(self):
        for master_port, replica_port in self.cut:
            iptables("-D", master_port, replica_port)
        self.cut = []

    def heal(self):
        self.heal_cut()
        super().heal()


SYNC_NEMESES = {n.name: n for n in (CutReplicasKillMaster,)}
