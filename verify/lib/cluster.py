"""The Cluster topology: three masters with one replica each (`redis-server --cluster-enabled yes`, in
the foreground, each stopped by its pid; made a cluster by `redis-cli --cluster create`), and the store
beside them (a plain redis-server, no part of the cluster).

Clients reach it through `redis+cluster://` URLs naming every node, each client's list rotated by its
number. Node settings are the test fixture's (tests/support/redis-cluster-fixture): node timeout 1.5 s.
A node's port leaves room for its bus port (port + 10000)."""
import os
import subprocess

from resp import Redis, RedisError
from polling import poll_until
from redis_server import RedisServer, free_port

LOCK_NAME = "verify-mutex"  # the lock the workload takes: its slot's owner is what the nemeses act on


def ask(port, *command, timeout=0.3):
    try:
        with Redis(port, timeout=timeout) as r:
            return r.call(*command)
    except (OSError, RedisError):
        return None


class Cluster:
    kind = "cluster"
    liveness_tolerance_ms = 3000  # as Sentinel's (sentinel.py): an attempt in flight + its WAIT

    def __init__(self, directory):
        self.store = RedisServer("store", os.path.join(directory, "store"))
        self.servers = []
        for n in range(1, 7):
            node_dir = os.path.join(directory, f"node{n}")
            self.servers.append(RedisServer(
                f"node{n}", node_dir, port=free_port(bus=True),
                extra=["--cluster-enabled", "yes", "--cluster-config-file", os.path.join(node_dir, "nodes.conf"),
                       "--cluster-node-timeout", "1500", "--repl-diskless-sync-delay", "0"]))
        self.directory = directory

    def url(self, client):
        n = len(self.servers)
        order = [self.servers[(client + i) % n] for i in range(n)]
        return "redis+cluster://" + ",".join(f"127.0.0.1:{s.port}" for s in order) + "/"

    def describe(self):
        return {"servers": [s.port for s in self.servers], "store_port": self.store.port}

    def start(self):
        self.store.start()
        for server in self.servers:
            server.start()
        with open(os.path.join(self.directory, "create.log"), "wb") as log:
            created = subprocess.run(["redis-cli", "--cluster", "create",
                                      *[f"127.0.0.1:{s.port}" for s in self.servers],
                                      "--cluster-replicas", "1", "--cluster-yes"],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, timeout=60)
        if created.returncode != 0 or not self.settle(timeout=30):
            self.stop()
            raise RuntimeError(f"the cluster did not come up (see {self.directory}/create.log and the node logs)")

    def server_at(self, port):
        return next((s for s in self.servers if s.port == port), None)

    def slot_owner(self):
        """(master, [its replicas]) for the lock's slot, as the first answering node sees it."""
        for server in self.servers:
            if not server.running:
                continue
            slot = ask(server.port, "CLUSTER", "KEYSLOT", LOCK_NAME)
            ranges = ask(server.port, "CLUSTER", "SLOTS")
            if slot is None or not ranges:
                continue
            for start, end, master, *replicas in ranges:
                if start <= slot <= end:
                    return self.server_at(master[1]), [self.server_at(r[1]) for r in replicas]
        return None, []

    def healthy(self):
        """Every node runs and says cluster_state:ok; the lock slot's owner has a replica whose link
        is up."""
        for server in self.servers:
            info = ask(server.port, "CLUSTER", "INFO") if server.running else None
            if not info or "cluster_state:ok" not in info:
                return False
        master, replicas = self.slot_owner()
        if master is None or not replicas:
            return False
        for replica in replicas:
            reply = ask(replica.port, "ROLE")
            if reply and reply[0] == "slave" and reply[2] == master.port and reply[3] == "connected":
                return True
        return False

    def settle(self, timeout=20, stopping=None):
        """True once healthy (polling), False after `timeout` seconds or once `stopping` is set."""
        return poll_until(self.healthy, timeout, stopping)

    def stop(self):
        for process in (*self.servers, self.store):
            process.stop()
