"""The red lock's topology: N independent standalone servers (no replication between them), and the
store. A red lock holds when a majority of them grant it (docs/locks/red_lock.md).

Its kind is `redlock`; the standalone nemeses that act on one server (`pause-server`, `kill-server`)
act on the first of them (`lock`): a minority, which a red lock must survive. A restart of that
server without persistence is Redlock's known weakness (Kleppmann): it forgets the grants it made,
and another client may then gather a majority with it. The nemesis's `reset` event means only that
server's state was lost: the checker does not end red-lock holds at it."""
import os

from redis_server import RedisServer


class RedLockServers:
    kind = "redlock"

    def __init__(self, directory, count):
        self.servers = [RedisServer(f"lock{n + 1}", os.path.join(directory, f"lock{n + 1}")) for n in range(count)]
        self.lock = self.servers[0]
        self.store = RedisServer("store", os.path.join(directory, "store"))

    def url(self, _client):
        return self.red_urls()[0]

    def red_urls(self):
        return [f"redis://127.0.0.1:{s.port}" for s in self.servers]

    def describe(self):
        return {"servers": [s.port for s in self.servers], "store_port": self.store.port}

    def start(self):
        self.store.start()
        for server in self.servers:
            server.start()

    def settle(self, timeout=20, stopping=None):
        return True

    def stop(self):
        for server in (*self.servers, self.store):
            server.stop()
