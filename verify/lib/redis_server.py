"""One redis-server process, started in the foreground so that the harness knows its pid and stops it
by that pid; and free loopback ports."""
import os
import random
import signal
import socket
import subprocess

from resp import wait_until_up


def ephemeral_low():
    """The first port of the kernel's ephemeral range, from which outgoing connections take theirs."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_handed_out = set()  # ports (and bus ports) given before: a server chosen but not started yet binds none


def free_port(bus=False):
    """A loopback port nobody listens on now, below the ephemeral range: a client's outgoing
    connection may take any free port of that range as its own between this check and the server's
    bind (a campaign lost a scenario so: "Address already in use"). `bus`: a cluster node, whose bus
    port (port + 10000) must be free and below that range too."""
    top = ephemeral_low() - 1 - (10000 if bus else 0)
    for _ in range(200):
        port = random.randint(10000, top)
        if port in _handed_out or (bus and port + 10000 in _handed_out):
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        if bus:
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
        _handed_out.update((port, port + 10000) if bus else (port,))
        return port
    raise RuntimeError("no free loopback port")


class RedisServer:
    """One redis-server process on 127.0.0.1:port, its files in dir (kept across restarts)."""

    def __init__(self, name, directory, appendonly="no", port=None, extra=()):
        self.name, self.dir, self.port = name, directory, port or free_port()
        self.appendonly = appendonly  # "no", "everysec" or "always"
        self.extra = list(extra)      # more arguments (cluster mode, replicaof)
        self.prefix = []              # a command the server runs under (setpriv: its own uid)
        self.env = None               # its environment (None: the harness's; a clock shim's LD_PRELOAD)
        self.process = None
        os.makedirs(directory, exist_ok=True)

    @property
    def keeps_locks_across_restart(self):
        # SIGKILL keeps the page cache, so even `everysec` loses nothing to a process crash
        # (docs/verification.md): only AOF off forgets every lock.
        return self.appendonly != "no"

    def arguments(self):
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--dir", self.dir, "--logfile", "redis.log", "--daemonize", "no"]
        if self.appendonly == "no":
            args += ["--appendonly", "no"]
        else:
            args += ["--appendonly", "yes", "--appendfsync", self.appendonly]
        return args + self.extra

    def start(self):
        args = self.arguments()
        self.process = subprocess.Popen(self.prefix + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        env=self.env)
        if not wait_until_up(self.port):
            self.stop()
            raise RuntimeError(f"{self.name}: redis-server did not start on port {self.port} (see {self.dir}/redis.log)")

    def signal(self, sig):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, sig)

    @property
    def running(self):
        return self.process is not None and self.process.poll() is None

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
