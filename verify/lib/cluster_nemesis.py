"""Nemeses of the Cluster topology beyond the planned failover (failover.py).

- `failover-force`: `CLUSTER FAILOVER FORCE` to the replica of the lock slot's master: the replica
  does not wait for the master to stop its clients and hand over its replication offset, so writes the
  master took meanwhile may be lost; the old master keeps serving until it hears of the new epoch.
- `failover-takeover`: `CLUSTER FAILOVER TAKEOVER`: the replica promotes itself without an election.
- `migrate-slot`: live migration of the lock's slot to another master and back, the way
  `redis-cli --cluster reshard` does it (`SETSLOT IMPORTING` / `MIGRATING`, `MIGRATE` of every key
  in the slot, then `SETSLOT NODE` everywhere) while clients hold and wait for the lock: meanwhile
  the old owner answers `ASK` for keys already moved, and then every node `MOVED`."""
import time

from cluster import LOCK_NAME, ask
from failover import _Failover, wait_for_new_master


class _ForcedFailover(_Failover):
    kinds = {"cluster"}
    MODE = None

    def fault(self, history, stopping):
        old = self.begin(history, stopping)
        if old is None:
            return
        replica = self.topology.slot_owner()[1][0]
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"master {old.port}",
                      via=f"replica {replica.port}")
        reply = ask(replica.port, "CLUSTER", "FAILOVER", self.MODE, timeout=2)
        new = wait_for_new_master(self.topology, old, stopping) if reply == "OK" else None
        history.event("nemesis", "info", "stop", nemesis=self.name, reply=str(reply),
                      new_master=new.port if new else None)

    def heal(self):
        pass


class FailoverForce(_ForcedFailover):
    name = "failover-force"
    MODE = "FORCE"


class FailoverTakeover(_ForcedFailover):
    name = "failover-takeover"
    MODE = "TAKEOVER"


def node_id(port):
    return ask(port, "CLUSTER", "MYID")


class MigrateSlot(_Failover):
    name = "migrate-slot"
    kinds = {"cluster"}

    def __init__(self, topology, **kw):
        super().__init__(topology, **kw)
        self.home = None  # the slot's first owner: every other fault moves it back there

    def masters(self):
        reply = ask(self.topology.servers[0].port, "CLUSTER", "SLOTS") or []
        ports = []
        for _start, _end, master, *_ in reply:
            if master[1] not in ports:
                ports.append(master[1])
        return [self.topology.server_at(p) for p in ports]

    def fault(self, history, stopping):
        source = self.begin(history, stopping)
        if source is None:
            return
        self.home = self.home or source
        target = self.home if source is not self.home else next(m for m in self.masters() if m is not source)
        slot = ask(source.port, "CLUSTER", "KEYSLOT", LOCK_NAME)
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"slot {slot}",
                      note=f"{source.port} -> {target.port}")
        moved, error = self.migrate(slot, source, target)
        history.event("nemesis", "info", "stop", nemesis=self.name, keys=moved, error=error)

    def migrate(self, slot, source, target):
        """Moves the slot's keys one MIGRATE at a time; returns (keys moved, error or None)."""
        source_id, target_id = node_id(source.port), node_id(target.port)
        for port, command in ((target.port, ("IMPORTING", source_id)), (source.port, ("MIGRATING", target_id))):
            reply = ask(port, "CLUSTER", "SETSLOT", slot, *command)
            if reply != "OK":
                return 0, f"SETSLOT {command[0]}: {reply}"
        moved = 0
        while True:
            keys = ask(source.port, "CLUSTER", "GETKEYSINSLOT", slot, 10)
            if not isinstance(keys, list):
                return moved, f"GETKEYSINSLOT: {keys}"
            if not keys:
                break
            for key in keys:
                reply = ask(source.port, "MIGRATE", "127.0.0.1", target.port, key, 0, 5000, timeout=6)
                if reply not in ("OK", "NOKEY"):
                    return moved, f"MIGRATE {key}: {reply}"
                moved += 1
                time.sleep(0.05)  # one key at a time: clients see ASK meanwhile
        for server in [target, source, *[m for m in self.masters() if m not in (source, target)]]:
            ask(server.port, "CLUSTER", "SETSLOT", slot, "NODE", target_id)
        return moved, None

    def heal(self):
        pass


CLUSTER_NEMESES = (FailoverForce, FailoverTakeover, MigrateSlot)
