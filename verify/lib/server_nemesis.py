"""Nemeses that act through the servers themselves: stalls asked of Redis, cut connections, a paused
replica, a wall-clock jump of the lock server.

- `client-pause`: `CLIENT PAUSE ms ALL` on the lock's master, 0.6 s then 3 s: every client command
  waits (key expiry is paused too, so no lease ends meanwhile).
- `client-kill`: `CLIENT KILL TYPE normal SKIPME yes` on the lock's master: every client connection
  is closed at once (holders, waiters, their subscriptions), and clients must reconnect.
- `debug-sleep` (standalone): `DEBUG SLEEP` 0.6 s then 3 s: the server's event loop blocks, as in a
  long fork or a slow disk (the server runs with `--enable-debug-command local`).
- `pause-replica` (Sentinel): SIGSTOP one replica (each in turn) for 4 s: the master's `WAIT 1` is
  answered by the other one, so grants go on; what it shows is that a lagging replica costs nothing
  as long as one is in sync.
- `clock-jump` (standalone): the lock server's wall clock (an LD_PRELOAD shim, clock_shim.c: Debian's
  libfaketime hangs redis-server) jumps 3 s forward for 2 s, then back. Redis expires keys by its wall
  clock: a hold with 1.5 s left is deleted at once, and a waiter takes the lock while its holder still
  works within its lease. No client can see it; fencing keeps the store right.
- `client-clock`: the clients' wall clock (libfaketime on the `deadbolt` CLI, through a wrapper
  script) an hour ahead, an hour behind, then ten times too fast, 4 s each."""
import os
import signal
import subprocess
import threading
import time

from resp import Redis, RedisError
from failover import lock_master

HERE = os.path.dirname(os.path.abspath(__file__))


def ask(port, *command, timeout=1.0):
    try:
        with Redis(port, timeout=timeout) as r:
            return r.call(*command)
    except (OSError, RedisError) as e:
        return f"error: {e}"


class ClientPause:
    name = "client-pause"
    kinds = {"standalone", "sentinel", "cluster"}

    def __init__(self, topology, lease_ms, **_):
        self.topology = topology
        self.durations = [0.4 * lease_ms / 1000, 2.0 * lease_ms / 1000]
        self.paused = None

    def fault(self, history, stopping):
        master = lock_master(self.topology)
        if master is None:
            return
        seconds = self.durations[0]
        self.durations.reverse()
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"master {master.port}", seconds=seconds)
        reply = ask(master.port, "CLIENT", "PAUSE", int(seconds * 1000), "ALL")
        self.paused = master
        stopping.wait(seconds)
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name, reply=str(reply))

    def heal(self):
        if self.paused is not None:
            ask(self.paused.port, "CLIENT", "UNPAUSE")
            self.paused = None


class ClientKill:
    name = "client-kill"
    kinds = {"standalone", "sentinel", "cluster"}

    def __init__(self, topology, **_):
        self.topology = topology

    def fault(self, history, stopping):
        master = lock_master(self.topology)
        if master is None:
            return
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"master {master.port}")
        reply = ask(master.port, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        history.event("nemesis", "info", "stop", nemesis=self.name, killed=reply)

    def heal(self):
        pass


def enable_debug_command(topology):
    for server in topology.servers:
        server.extra += ["--enable-debug-command", "local"]


class DebugSleep:
    name = "debug-sleep"
    kinds = {"standalone"}
    prepare = staticmethod(enable_debug_command)

    def __init__(self, topology, lease_ms, **_):
        self.topology = topology
        self.durations = [0.4 * lease_ms / 1000, 2.0 * lease_ms / 1000]

    def fault(self, history, stopping):
        seconds = self.durations[0]
        self.durations.reverse()
        port = self.topology.lock.port
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"server {port}", seconds=seconds)
        reply = ask(port, "DEBUG", "SLEEP", f"{seconds:g}", timeout=seconds + 5)  # answered when it wakes
        history.event("nemesis", "info", "stop", nemesis=self.name, reply=str(reply))

    def heal(self):
        pass


class PauseReplica:
    name = "pause-replica"
    kinds = {"sentinel"}
    SECONDS = 4

    def __init__(self, topology, **_):
        self.topology = topology
        self.turn = 0
        self.paused = None

    def fault(self, history, stopping):
        if not self.topology.settle(stopping=stopping):
            return
        master = self.topology.master()
        replicas = [s for s in self.topology.servers if s is not master]
        replica = replicas[self.turn % len(replicas)]
        self.turn += 1
        history.event("nemesis", "info", "start", nemesis=self.name, target=f"replica {replica.port}",
                      seconds=self.SECONDS)
        replica.signal(signal.SIGSTOP)
        self.paused = replica
        stopping.wait(self.SECONDS)
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name)

    def heal(self):
        if self.paused is not None:
            self.paused.signal(signal.SIGCONT)
            self.paused = None


def build_clock_shim(directory):
    """Compiles clock_shim.c into directory (gcc); returns the .so's path."""
    library = os.path.join(directory, "clock_shim.so")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", library, os.path.join(HERE, "clock_shim.c")],
                   check=True, stdin=subprocess.DEVNULL)
    return library


def shim_the_lock_server(topology):
    """The lock server runs with the wall-clock shim, reading its offset from a file in its folder."""
    server = topology.lock
    offset_file = os.path.join(server.dir, "clock-offset-ms")
    with open(offset_file, "w", encoding="ascii") as f:
        f.write("0\n")
    server.clock_offset_file = offset_file
    server.env = dict(os.environ, LD_PRELOAD=build_clock_shim(server.dir), VERIFY_CLOCK_OFFSET_FILE=offset_file)


class ClockJump:
    name = "clock-jump"
    kinds = {"standalone"}
    prepare = staticmethod(shim_the_lock_server)
    JUMP_MS = 3000
    SECONDS = 2

    def __init__(self, topology, clients, **_):
        self.server = topology.lock
        self.clients = clients
        self.lock = threading.Lock()

    def set_offset(self, ms):
        with self.lock:
            tmp = self.server.clock_offset_file + ".tmp"
            with open(tmp, "w", encoding="ascii") as f:
                f.write(f"{ms}\n")
            os.replace(tmp, self.server.clock_offset_file)  # the shim never reads half a number

    def fault(self, history, stopping):
        # Just as a hold begins: the previous holder's client is starting its next acquire, which
        # then finds the hold already expired.
        end = time.monotonic() + 5
        while time.monotonic() < end and not stopping.is_set() and not any(c.holding_groups for c in self.clients):
            time.sleep(0.005)
        history.event("nemesis", "info", "start", nemesis=self.name, target="lock server wall clock",
                      jump_ms=self.JUMP_MS, seconds=self.SECONDS)
        self.set_offset(self.JUMP_MS)
        stopping.wait(self.SECONDS)
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name, note="clock back (a backward jump)")

    def heal(self):
        self.set_offset(0)


FAKETIME_LIBRARIES = ("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                      "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1")


def dynamic_loader():
    """The dynamic loader (ld.so) of this machine, which can run a program with a library preloaded."""
    for path in ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"):
        if os.path.exists(path):
            return path
    return "ld.so"


def faketime_clients(topology, deadbolt):
    """The deadbolt the clients run: a wrapper that runs it under libfaketime (wall clock only:
    FAKETIME_DONT_FAKE_MONOTONIC=1, faking the monotonic clock hangs condition_variable::wait_for),
    reading the fake time from a file at every call; `deadbolt` itself when libfaketime is missing."""
    library = next((p for p in FAKETIME_LIBRARIES if os.path.exists(p)), None)
    if library is None:
        topology.client_clock_file = None
        return deadbolt
    directory = os.path.dirname(topology.store.dir)
    topology.client_clock_file = os.path.join(directory, "client-faketime")
    with open(topology.client_clock_file, "w", encoding="ascii") as f:
        f.write("+0\n")
    wrapper = os.path.join(directory, "deadbolt-faketime")
    with open(wrapper, "w", encoding="ascii") as f:
        # ld.so --preload: deadbolt alone runs with libfaketime; LD_PRELOAD would pass it on to COMMAND
        # (Python's time.sleep fails with EINVAL under it).
        f.write(f"#!/bin/sh\nFAKETIME_TIMESTAMP_FILE={topology.client_clock_file} FAKETIME_NO_CACHE=1 "
                f"FAKETIME_DONT_FAKE_MONOTONIC=1 exec {dynamic_loader()} --preload {library} {deadbolt} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return wrapper


class ClientClock:
    """The clients' wall clock (libfaketime on the deadbolt CLI and its COMMAND): an hour ahead, an hour
    behind, ten times too fast, 4 s each. deadbolt times leases and waits by the monotonic clock, so
    nothing should change."""
    name = "client-clock"
    kinds = {"standalone", "sentinel", "cluster"}
    wrap_clients = staticmethod(faketime_clients)
    SETTINGS = ("+3600", "-3600", "+0 x10")
    SECONDS = 4

    def __init__(self, topology, **_):
        self.file = getattr(topology, "client_clock_file", None)
        self.turn = 0

    def set(self, value):
        tmp = self.file + ".tmp"
        with open(tmp, "w", encoding="ascii") as f:
            f.write(value + "\n")
        os.replace(tmp, self.file)

    def fault(self, history, stopping):
        if self.file is None:
            history.event("nemesis", "info", "skip", nemesis=self.name, note="libfaketime is not installed")
            stopping.wait(5)
            return
        setting = self.SETTINGS[self.turn % len(self.SETTINGS)]
        self.turn += 1
        history.event("nemesis", "info", "start", nemesis=self.name, target="clients' wall clock",
                      faketime=setting, seconds=self.SECONDS)
        self.set(setting)
        stopping.wait(self.SECONDS)
        self.heal()
        history.event("nemesis", "info", "stop", nemesis=self.name)

    def heal(self):
        if self.file is not None:
            self.set("+0")


SERVER_NEMESES = (ClientPause, ClientKill, DebugSleep, PauseReplica, ClockJump, ClientClock)
