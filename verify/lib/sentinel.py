"""The Sentinel topology: a master, two replicas and three sentinels (redis-server and redis-sentinel
in the foreground, each stopped by its pid), and the store beside them.

Clients reach it through `redis+sentinel://` URLs that name every sentinel, each client's list
rotated by its number (client 1 starts with sentinel 1, client 2 with sentinel 2, ...): which sentinel
a client asks first, and watches, differs between clients, so that silencing one sentinel leaves some
clients deaf and others not, as in a real deployment.

Sentinel settings are the test fixture's (tests/support/redis-sentinel-fixture): down after 1 s,
failover timeout 3 s, quorum 2."""
import os
import subprocess

from resp import Redis, RedisError
from polling import poll_until
from redis_server import RedisServer, free_port

MASTER_NAME = "verify"


class Sentinel:
    """One redis-sentinel process on 127.0.0.1:port (its config file is rewritten by it)."""

    def __init__(self, name, directory, master_port):
        self.name, self.dir, self.port = name, directory, free_port()
        self.master_port = master_port
        self.process = None
        self.prefix = []  # a command it runs under (setpriv: its own uid)
        os.makedirs(directory, exist_ok=True)

    def start(self):
        conf = os.path.join(self.dir, "sentinel.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write(f"port {self.port}\nbind 127.0.0.1\ndaemonize no\ndir {self.dir}\nlogfile sentinel.log\n"
                    f"sentinel resolve-hostnames no\n"
                    f"sentinel monitor {MASTER_NAME} 127.0.0.1 {self.master_port} 2\n"
                    f"sentinel down-after-milliseconds {MASTER_NAME} 1000\n"
                    f"sentinel failover-timeout {MASTER_NAME} 3000\n"
                    f"sentinel parallel-syncs {MASTER_NAME} 1\n")
        if getattr(self, "uid", None) is not None:  # running under its own uid: it rewrites this file
            os.chown(conf, self.uid, self.uid)
        self.process = subprocess.Popen([*self.prefix, "redis-sentinel", conf], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    # The same stopping as a data node's.
    signal = RedisServer.signal
    kill = RedisServer.kill
    stop = RedisServer.stop
    running = RedisServer.running

    def ask(self, *command, timeout=0.5):
        """A sentinel command's reply, None when it does not answer (paused, down)."""
        try:
            with Redis(self.port, timeout=timeout) as r:
                return r.call(*command)
        except (OSError, RedisError):
            return None

    def master_port_named(self):
        reply = self.ask("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
        return int(reply[1]) if reply else None


def role(port, timeout=0.3):
    """A data node's ROLE reply, None when it does not answer."""
    try:
        with Redis(port, timeout=timeout) as r:
            return r.call("ROLE")
    except (OSError, RedisError):
        return None


class SentinelGroup:
    kind = "sentinel"
    # More clients than elsewhere: waiters then wait longer, so that some wait across a failover, as a
    # long-lived service's client would (a waiter deaf to the switch is how two holders happened).
    clients = 8
    # A waiter may end later than its --wait here, by design (docs/replication.md: an acquire's
    # retries go on past its own wait): an attempt in flight at the deadline is answered within
    # command_timeout (deadbolt's --connect-timeout, 1 s) plus its WAIT (1 s). Added to the 1 s
    # allowed everywhere for process start-up on a loaded machine.
    liveness_tolerance_ms = 3000

    def __init__(self, directory, replica_sync="auto"):
        # deadbolt's --replica-sync: auto (WAIT 1 after each hold write, the default) or off
        self.cli_args = [] if replica_sync == "auto" else ["--replica-sync", replica_sync]
        self.store = RedisServer("store", os.path.join(directory, "store"))
        master_port = free_port()
        self.servers = [RedisServer("node1", os.path.join(directory, "node1"), port=master_port)]
        for n in (2, 3):
            self.servers.append(RedisServer(f"node{n}", os.path.join(directory, f"node{n}"),
                                            extra=["--replicaof", "127.0.0.1", str(master_port)]))
        for server in self.servers:
            server.extra += ["--repl-diskless-sync-delay", "0"]
        self.sentinels = [Sentinel(f"sentinel{n}", os.path.join(directory, f"sentinel{n}"), master_port)
                          for n in (1, 2, 3)]
        self.paused_sentinels = set()  # nemeses mark what they paused: settle() does not wait for those

    def url(self, client):
        n = len(self.sentinels)
        order = [self.sentinels[(client + i) % n] for i in range(n)]
        return "redis+sentinel://" + ",".join(f"127.0.0.1:{s.port}" for s in order) + f"/{MASTER_NAME}"

    def describe(self):
        return {"servers": [s.port for s in self.servers], "sentinels": [s.port for s in self.sentinels],
                "store_port": self.store.port}

    def start(self):
        self.store.start()
        for server in self.servers:
            server.start()
        for sentinel in self.sentinels:
            sentinel.start()
        if not self.settle(timeout=30):
            self.stop()
            raise RuntimeError("the sentinel group did not come up (see the node and sentinel logs)")

    def server_at(self, port):
        return next((s for s in self.servers if s.port == port), None)

    def master(self):
        """The data node the answering sentinels name master (the first that answers)."""
        for sentinel in self.sentinels:
            if sentinel in self.paused_sentinels:
                continue
            port = sentinel.master_port_named()
            if port:
                return self.server_at(port)
        return None

    def healthy(self):
        """Every live sentinel names one master, which is a master, knows its two replicas and the other
        sentinels, with no failover in progress; the master has two replicas with their link up."""
        named = {s.master_port_named() for s in self.sentinels if s not in self.paused_sentinels}
        if len(named) != 1 or None in named:
            return False
        master = self.server_at(named.pop())
        if master is None or not master.running:
            return False
        for sentinel in self.sentinels:
            if sentinel in self.paused_sentinels:
                continue
            info = sentinel.ask("SENTINEL", "MASTER", MASTER_NAME)
            fields = dict(zip(info[::2], info[1::2])) if info else {}
            if (fields.get("flags") != "master" or fields.get("num-slaves") != "2"
                    or fields.get("num-other-sentinels") != "2"):
                return False
        reply = role(master.port)
        if not reply or reply[0] != "master" or len(reply[2]) != 2:
            return False
        for server in self.servers:
            if server is master:
                continue
            reply = role(server.port)
            if not reply or reply[0] != "slave" or reply[2] != master.port or reply[3] != "connected":
                return False
        return True

    def settle(self, timeout=20, stopping=None):
        """True once healthy (polling), False after `timeout` seconds or once `stopping` is set."""
        return poll_until(self.healthy, timeout, stopping)

    def stop(self):
        for process in (*self.sentinels, *self.servers, self.store):
            process.stop()
