"""Network nemeses: netfilter rules on loopback, inside the campaign's private network namespace
(netfilter.py; outside one they skip every fault and say so in the history).

- `partition-drop`: every packet to and from the lock's master port is dropped (requests and
  replies: connections hang, new ones time out), for 0.6 s, then 3 s (shorter and longer than the
  lease), then the rules are removed. The server keeps running and expiring keys: holds taken before
  the cut end while their holders cannot reach it.
- `partition-reject`: the same port refused (`REJECT --reject-with tcp-reset`): open connections are
  reset at their next packet, new ones refused at once.
- `loss`: 30% of the packets to and from the master port dropped at random (`statistic`), for 4 s:
  TCP retransmits, so commands are slow rather than lost.
- `partition-master` (Sentinel, Cluster): a node-to-node partition on one address. Every data node
  and sentinel runs under its own uid (`prepare()`, before the topology starts: `setpriv`), and the
  connections between the master (the lock slot's) and its peers (replicas and sentinels; on Cluster,
  every other node, bus included) are marked by the uid that opened them and dropped both ways, while
  clients still reach every node: the classic split brain. The cut lasts until the others have
  promoted a replica and 3 s more, so that clients still on the old master keep using it while the
  new one grants too; then it heals, and the old master is demoted.

- `delay`: every packet to and from the master port held by a user-space delayer (nfq_delay.c on
  NFQUEUE: this kernel has no netem), 100 ms each way, then 600 ms, 4 s each.

The partitions' durations follow the lease (1.5 s): 0.4 and 2 leases, as pause-server's."""
import os
import subprocess
import time

import netfilter
from cluster import ask
from failover import _Failover, lock_master, wait_for_new_master


class _NetworkFault:
    kinds = {"standalone", "sentinel", "cluster"}

    def __init__(self, topology, lease_ms, **_):
        self.topology = topology
        self.rules = netfilter.Rules()
        self.durations = [0.4 * lease_ms / 1000, 2.0 * lease_ms / 1000]

    def unavailable(self, history):
        if netfilter.available():
            return False
        history.event("nemesis", "info", "skip", nemesis=self.name,
                      note="no private network namespace (verify/run enters one as root): no netfilter rules")
        return True

    def fault(self, history, stopping):
        if self.unavailable(history):
            stopping.wait(5)
            return
        master = lock_master(self.topology)
        if master is None:
            return
        seconds = self.durations[0]
        self.durations.reverse()
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"port {master.port}", seconds=seconds)
        self.cut(master.port)
        stopping.wait(seconds)
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name)

    def heal(self):
        self.rules.clear()


class PartitionDrop(_NetworkFault):
    name = "partition-drop"

    def cut(self, port):
        self.rules.drop_port(port)


class PartitionReject(_NetworkFault):
    name = "partition-reject"

    def cut(self, port):
        self.rules.drop_port(port, target=("REJECT", "--reject-with", "tcp-reset"))


class Loss(_NetworkFault):
    name = "loss"
    PROBABILITY = 0.3

    def __init__(self, topology, lease_ms, **kw):
        super().__init__(topology, lease_ms, **kw)
        self.durations = [4.0]

    def cut(self, port):
        self.rules.lose(port, self.PROBABILITY)


HERE = os.path.dirname(os.path.abspath(__file__))

# Uids for the nodes of a partition-master scenario: none of them is a real user's.
FIRST_UID = 27001


def run_under_own_uids(topology):
    """Every data node and sentinel of the topology runs under a uid (and gid) of its own, owning its
    folder, so that netfilter can tell their connections apart on 127.0.0.1."""
    processes = [*topology.servers, *getattr(topology, "sentinels", [])]
    for n, process in enumerate(processes):
        uid = FIRST_UID + n
        process.uid = uid
        process.prefix = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
        subprocess.run(["chown", "-R", f"{uid}:{uid}", process.dir], check=True)


class PartitionMaster(_Failover):
    name = "partition-master"
    kinds = {"sentinel", "cluster"}
    AFTER_PROMOTION_SECONDS = 3
    prepare = staticmethod(run_under_own_uids)

    def __init__(self, topology, **kw):
        super().__init__(topology, **kw)
        self.rules = netfilter.Rules()
        self.mark = 0x2700

    def peers_of(self, master):
        """(uid, port) pairs whose connections make up the master's links to its peers."""
        peers = [s for s in self.topology.servers if s is not master]
        if self.topology.kind == "sentinel":
            # replicas and sentinels connect to the master; the master connects to none of them
            return [(p.uid, master.port) for p in [*peers, *self.topology.sentinels]]
        # Cluster: the replication link and the cluster bus (port + 10000), opened either way
        pairs = []
        for p in peers:
            pairs += [(p.uid, master.port), (p.uid, master.port + 10000),
                      (master.uid, p.port), (master.uid, p.port + 10000)]
        return pairs

    def fault(self, history, stopping):
        if not netfilter.available() or not hasattr(self.topology.servers[0], "uid"):
            history.event("nemesis", "info", "skip", nemesis=self.name,
                          note="needs a private network namespace and the nodes under their own uids")
            stopping.wait(5)
            return
        old = self.begin(history, stopping)
        if old is None:
            return
        self.mark += 1  # a fresh mark: connections marked by an earlier cut stay marked
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"master {old.port}",
                      note="cut from its replicas and sentinels (cluster: every other node); clients reach all")
        self.rules.cut_uids(self.mark, self.peers_of(old))
        new = self.wait_for_promotion(old, stopping)
        stopping.wait(self.AFTER_PROMOTION_SECONDS)
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name, new_master=new.port if new else None)

    def wait_for_promotion(self, old, stopping):
        if self.topology.kind == "sentinel":  # the sentinels name it
            return wait_for_new_master(self.topology, old, stopping)
        # Cluster: the old master, cut off, still claims the slot; ask the others.
        others = [s for s in self.topology.servers if s is not old and s.running]
        slot = ask(others[0].port, "CLUSTER", "KEYSLOT", "verify-mutex")

        def owner():
            for s in others:
                for start, end, master, *_ in ask(s.port, "CLUSTER", "SLOTS") or []:
                    if start <= slot <= end and master[1] != old.port:
                        return self.topology.server_at(master[1])
            return None
        return poll_for(owner, 15, stopping)

    def heal(self):
        self.rules.clear()


def poll_for(get, seconds, stopping):
    """get()'s first true value, polled every 50 ms; None after `seconds` or once stopping."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stopping.is_set():
        value = get()
        if value:
            return value
        time.sleep(0.05)
    return None


def build_delayer(topology):
    """Compiles nfq_delay.c into the scenario's folder (gcc, libnetfilter-queue); None when it cannot."""
    directory = os.path.dirname(topology.store.dir)
    program = os.path.join(directory, "nfq_delay")
    built = subprocess.run(["gcc", "-O2", "-o", program, os.path.join(HERE, "nfq_delay.c"), "-lnetfilter_queue"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    topology.delayer = program if built.returncode == 0 else None
    topology.delayer_error = built.stderr.decode(errors="replace").strip()[-300:]


class Delay(_NetworkFault):
    """Every packet to and from the master port held DELAY ms by a user-space delayer (NFQUEUE): 100 ms
    each way (a round trip 200 ms longer), then 600 ms each way (1.2 s: longer than deadbolt's 1 s
    command timeout here), 4 s each."""
    name = "delay"
    prepare = staticmethod(build_delayer)
    QUEUE = 27

    def __init__(self, topology, lease_ms, **kw):
        super().__init__(topology, lease_ms, **kw)
        self.durations = [4.0]
        self.delays_ms = [100, 600]
        self.process = None

    def fault(self, history, stopping):
        if self.unavailable(history):
            stopping.wait(5)
            return
        master = lock_master(self.topology)
        if getattr(self.topology, "delayer", None) is None or master is None:
            history.event("nemesis", "info", "skip", nemesis=self.name,
                          note=f"no delayer ({getattr(self.topology, 'delayer_error', '')}) or no master")
            stopping.wait(5)
            return
        delay = self.delays_ms[0]
        self.delays_ms.reverse()
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"port {master.port}",
                      seconds=self.durations[0], delay_ms=delay)
        self.process = subprocess.Popen([self.topology.delayer, str(self.QUEUE), str(delay)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        time.sleep(0.1)  # bound to its queue before packets go there (until then they bypass it)
        for direction in ("--dport", "--sport"):
            self.rules.add("OUTPUT", "-o", "lo", "-p", "tcp", direction, str(master.port), "-j", "NFQUEUE",
                           "--queue-num", str(self.QUEUE), "--queue-bypass")
        stopping.wait(self.durations[0])
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name)

    def heal(self):
        self.rules.clear()
        if self.process is not None:
            self.process.terminate()  # it lets what it holds go, then exits
            try:
                self.process.wait(3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None


NETWORK_NEMESES = (PartitionDrop, PartitionReject, Loss, Delay, PartitionMaster)
