"""Topologies: the servers a scenario runs against, each started in the foreground by the harness so
that it knows every pid and stops each by it.

So far: `standalone` (one lock server; AOF off, `everysec` or `always`), `sentinel` (a master, two
replicas and three sentinels: sentinel.py) and `cluster` (three masters with a replica each:
cluster.py). Every scenario also gets the store, a separate redis-server holding the fenced register,
which no nemesis touches.

A topology has `kind` (which nemeses apply to it), `store`, `servers` (the data nodes: the lease probe
asks each), `url(i)` (client i's deadbolt URL), `start()`, `stop()` and `settle()` (waits, bounded,
until it is healthy again after a fault, so that the next fault finds it whole)."""
import os

from cluster import Cluster
from redis_server import RedisServer
from sentinel import SentinelGroup


class Standalone:
    """One lock server and the store."""
    kind = "standalone"

    def __init__(self, directory, appendonly="no"):
        self.lock = RedisServer("lock", os.path.join(directory, "lock"), appendonly)
        self.store = RedisServer("store", os.path.join(directory, "store"))
        self.servers = [self.lock]

    def url(self, _client):
        return f"redis://127.0.0.1:{self.lock.port}"

    def describe(self):
        return {"lock_port": self.lock.port, "store_port": self.store.port}

    def start(self):
        self.store.start()
        self.lock.start()

    def settle(self, timeout=20, stopping=None):
        return True

    def stop(self):
        for server in (self.lock, self.store):
            server.stop()


TOPOLOGIES = {
    "standalone": lambda d: Standalone(d, "no"),
    "standalone-aof-everysec": lambda d: Standalone(d, "everysec"),
    "standalone-aof-always": lambda d: Standalone(d, "always"),
    "sentinel": SentinelGroup,
    "sentinel-sync-off": lambda d: SentinelGroup(d, replica_sync="off"),
    "cluster": Cluster,
}
