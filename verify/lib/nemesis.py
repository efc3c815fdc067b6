"""Nemeses: faults applied on a schedule, each followed by a heal phase, each recorded in the history
(process "nemesis", f "start"/"stop", with what was done) so that reports can shade fault periods.

A nemesis's `fault()` injects one fault and heals it before returning; `heal()` undoes whatever may be
left when the campaign stops in the middle of one. `kinds`: the topologies it applies to. The
failovers of the Sentinel and Cluster topologies are in failover.py."""
import os
import random
import signal
import time


class PauseServer:
    """SIGSTOP the lock server, SIGCONT it later: a hung host whose sockets stay open. Pauses alternate
    shorter and longer than the lease, so some holds outlive their lease while the server is away."""
    name = "pause-server"
    kinds = {"standalone"}

    def __init__(self, topology, lease_ms, **_):
        self.server = topology.lock
        self.durations = [0.4 * lease_ms / 1000, 2.0 * lease_ms / 1000]

    def fault(self, history, stopping):
        seconds = self.durations[0]
        self.durations.reverse()
        history.event("nemesis", "info", "start", nemesis=self.name, target="lock server", seconds=seconds)
        self.server.signal(signal.SIGSTOP)
        stopping.wait(seconds)
        self.server.signal(signal.SIGCONT)
        history.event("nemesis", "info", "stop", nemesis=self.name)

    def heal(self):
        self.server.signal(signal.SIGCONT)


class KillServer:
    """SIGKILL the lock server, restart it on the same port and files after a while. Without AOF the
    restart forgets every lock and the fencing counter: recorded as a `reset`, which the checker
    treats as the end of every hold taken before it."""
    name = "kill-server"
    kinds = {"standalone"}

    def __init__(self, topology, lease_ms, **_):
        self.server = topology.lock
        self.downtimes = [0.3, 0.5 * lease_ms / 1000]

    def fault(self, history, stopping):
        seconds = self.downtimes[0]
        self.downtimes.reverse()
        history.event("nemesis", "info", "start", nemesis=self.name, target="lock server", seconds=seconds)
        self.server.kill()
        if not self.server.keeps_locks_across_restart:
            history.event("nemesis", "info", "reset", why="lock server restarted without persistence")
        stopping.wait(seconds)
        self.server.start()
        history.event("nemesis", "info", "stop", nemesis=self.name)

    def heal(self):
        if self.server.process.poll() is not None:
            self.server.start()


class PauseClient:
    """SIGSTOP a client that holds the lock (deadbolt and its COMMAND: a paused host or a long GC)
    for longer than its lease, then SIGCONT it: its lease ends, another client takes the lock, and
    the paused one wakes up mid-increment with an old token that the store must refuse."""
    name = "pause-client"
    kinds = {"standalone", "sentinel", "cluster"}

    def __init__(self, clients, lease_ms, **_):
        self.clients = clients
        self.seconds = 1.5 * lease_ms / 1000
        self.paused = None

    def fault(self, history, stopping):
        end = time.monotonic() + 5
        while time.monotonic() < end and not stopping.is_set():
            holding = [(c.client, c.holding_groups) for c in self.clients if c.holding_groups]
            if holding:
                break
            time.sleep(0.01)
        else:
            return
        client, groups = random.choice(holding)
        history.event("nemesis", "info", "start", nemesis=self.name, target=client, seconds=self.seconds)
        # deadbolt's group first, so that its guardian cannot see COMMAND stop (deadbolt follows a
        # stopped COMMAND into the background, as a shell job does, and would stay stopped).
        self.paused = []
        for group in dict.fromkeys(groups):
            try:
                os.killpg(group, signal.SIGSTOP)
                self.paused.append(group)
            except ProcessLookupError:
                pass
        if not self.paused:
            return history.event("nemesis", "info", "stop", nemesis=self.name, note="the client had exited")
        stopping.wait(self.seconds)
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name)

    def heal(self):
        # COMMAND first, then deadbolt: when deadbolt wakes up, COMMAND runs already.
        for group in reversed(self.paused or []):
            try:
                os.killpg(group, signal.SIGCONT)
            except ProcessLookupError:
                pass
        self.paused = None


from failover import Failover, KillMaster, PauseMaster, SilentSentinelFailover  # noqa: E402

NEMESES = {n.name: n for n in (PauseServer, KillServer, PauseClient, Failover, KillMaster, PauseMaster,
                               SilentSentinelFailover)}

# Network (netfilter), server-side and Cluster nemeses: network_nemesis.py, server_nemesis.py,
# cluster_nemesis.py.
from network_nemesis import NETWORK_NEMESES  # noqa: E402
from server_nemesis import SERVER_NEMESES  # noqa: E402
from cluster_nemesis import CLUSTER_NEMESES  # noqa: E402

NEMESES.update({n.name: n for n in (*NETWORK_NEMESES, *SERVER_NEMESES, *CLUSTER_NEMESES)})
