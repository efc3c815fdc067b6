"""Topologies: the servers a scenario runs against, each started in the foreground by the harness so
that it knows every pid and stops each by it.

So far: `standalone` (one lock server; AOF off, `everysec` or `always`). Every scenario also gets the
store, a separate redis-server holding the fenced register, which no nemesis touches."""
import os
import signal
import socket
import subprocess

from resp import wait_until_up


def free_port():
    """A loopback port nobody listens on now (inside the private network namespace, any is free)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """One redis-server process on 127.0.0.1:port, its files in dir (kept across restarts)."""

    def __init__(self, name, directory, appendonly="no", port=None):
        self.name, self.dir, self.port = name, directory, port or free_port()
        self.appendonly = appendonly  # "no", "everysec" or "always"
        self.process = None
        os.makedirs(directory, exist_ok=True)

    @property
    def keeps_locks_across_restart(self):
        # SIGKILL keeps the page cache, so even `everysec` loses nothing to a process crash
        # (docs/verification.md): only AOF off forgets every lock.
        return self.appendonly != "no"

    def start(self):
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--dir", self.dir, "--logfile", "redis.log", "--daemonize", "no"]
        if self.appendonly == "no":
            args += ["--appendonly", "no"]
        else:
            args += ["--appendonly", "yes", "--appendfsync", self.appendonly]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        if not wait_until_up(self.port):
            self.stop()
            raise RuntimeError(f"{self.name}: redis-server did not start on port {self.port} (see {self.dir}/redis.log)")

    def signal(self, sig):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, sig)

    def kill(self):
        """SIGKILL, and wait until it is gone (its port free again)."""
        self.signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        """Resumes it (a nemesis may have paused it), asks it to end, kills it after 3 s."""
        if not self.process or self.process.poll() is not None:
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.process.wait(3)
        except subprocess.TimeoutExpired:
            self.kill()


class Standalone:
    """One lock server and the store."""

    def __init__(self, directory, appendonly="no"):
        self.lock = RedisServer("lock", os.path.join(directory, "lock"), appendonly)
        self.store = RedisServer("store", os.path.join(directory, "store"))

    def start(self):
        self.store.start()
        self.lock.start()

    def stop(self):
        for server in (self.lock, self.store):
            server.stop()


TOPOLOGIES = {
    "standalone": lambda d: Standalone(d, "no"),
    "standalone-aof-everysec": lambda d: Standalone(d, "everysec"),
    "standalone-aof-always": lambda d: Standalone(d, "always"),
}
