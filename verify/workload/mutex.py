"""The mutex workload through the CLI: each client is a thread of the harness that, until told to stop,
runs `deadbolt run --fenced` with the critical section (mutex_critical.py) as COMMAND, once per
operation, and records what happens.

The client records the acquire's invoke (with the waiter's deadline and a first lower bound of the
lease's end: the invoke time + the lease, since the grant cannot come earlier), passes on the events
the critical section prints, and records the outcome it alone sees: `deadbolt` gave up waiting (exit
4), could not connect (3), reported the lease lost (5), or hung past every bound (the harness kills
it: an `info` acquire, which the checker counts as a waiter that never finished).

Each `deadbolt` starts a session of its own, so its process group is exactly deadbolt (and its
guardian); COMMAND runs in a group of its own, which the critical section reports (`pgid` in its
`acquire ok`; older deadbolts kept COMMAND in their group). The pause-client nemesis stops and resumes
both groups (a paused host), and the harness kills deadbolt's group by its id."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

from history import now

CRITICAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mutex_critical.py")
MS = 1_000_000


class MutexClient(threading.Thread):
    def __init__(self, name, deadbolt, history, url, lock_ports, store_port, log_dir, lock_name="verify-mutex",
                 lease_ms=1500, wait_ms=6000, work_ms=100, grace_ms=1000, fenced=True, global_args=()):
        super().__init__(name=name, daemon=True)
        self.client = name
        self.deadbolt, self.history = deadbolt, history
        # url: deadbolt's --url (redis://, redis+sentinel://, redis+cluster://); lock_ports: every data
        # node, which the critical section's lease probe asks (it cannot know which one deadbolt uses)
        self.url, self.lock_ports, self.store_port, self.lock_name = url, lock_ports, store_port, lock_name
        self.lease_ms, self.wait_ms, self.work_ms, self.grace_ms = lease_ms, wait_ms, work_ms, grace_ms
        self.fenced = fenced  # False: the store is not given the token (a resource without fencing)
        self.global_args = list(global_args)  # more deadbolt options (--replica-sync off)
        self.log = open(os.path.join(log_dir, f"{name}.log"), "ab")
        self.stopping = threading.Event()
        # While COMMAND holds the lock: the process groups of deadbolt (with its guardian) and of
        # COMMAND, which deadbolt runs in a group of its own (as a shell runs a job)
        self.holding_groups = None
        self.operations = 0

    def command(self):
        return [self.deadbolt, "--url", self.url, "--connect-timeout", "1s", *self.global_args,
                "run", "--fenced", "--lease", f"{self.lease_ms}ms", "--grace", f"{self.grace_ms}ms",
                "--wait", f"{self.wait_ms}ms", "-q", self.lock_name, "--", sys.executable, "-B", CRITICAL]

    def run(self):
        while not self.stopping.is_set():
            self.operations += 1
            if not self.one_operation(f"{self.client}.{self.operations}"):
                time.sleep(0.1)  # the server is down or refused: do not spin

    def one_operation(self, hold):
        """One acquire + increment + release; False when deadbolt failed without a hold."""
        asked = now()
        self.history.record({"time": asked, "process": self.client, "hold": hold, "type": "invoke", "f": "acquire",
                             "deadline": asked + self.wait_ms * MS, "lease_deadline": asked + self.lease_ms * MS})
        env = dict(os.environ, VERIFY_HOLD=hold, VERIFY_LOCK_PORTS=",".join(map(str, self.lock_ports)),
                   VERIFY_STORE_PORT=str(self.store_port), VERIFY_WORK_MS=str(self.work_ms),
                   VERIFY_FENCED="1" if self.fenced else "0")
        self.log.write(f"--- {hold}\n".encode())
        self.log.flush()
        p = subprocess.Popen(self.command(), stdout=subprocess.PIPE, stderr=self.log, env=env, start_new_session=True)
        killed = threading.Event()

        def kill_hung():  # past every bound deadbolt was given: a hung waiter or holder
            killed.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        bound = (self.wait_ms + self.lease_ms + self.grace_ms) / 1000 + 5
        timer = threading.Timer(bound, kill_hung)
        timer.start()
        granted = False
        try:
            for line in p.stdout:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                self.history.record(event)
                if event["f"] == "acquire" and event["type"] == "ok":
                    granted = True
                    self.holding_groups = (p.pid, event.get("pgid", p.pid))
            p.wait()
        finally:
            timer.cancel()
            self.holding_groups = None
            p.stdout.close()
        code = p.returncode
        if killed.is_set():
            self.history.event(self.client, "info", "acquire" if not granted else "exit", hold=hold,
                               error=f"hung: killed by the harness after {bound:.1f} s")
        elif not granted:
            # Exit 5 before the critical section said anything: deadbolt had the lock, but its lease
            # was too near its end by the time the grant was confirmed (a slow WAIT in a failover), so
            # COMMAND was stopped as it started, before it touched the store. The waiter finished.
            kind, why = {4: ("fail", "timeout"), 3: ("fail", "cannot connect"),
                         5: ("fail", "lease lost before the command began")}.get(code, ("info", f"exit {code}"))
            self.history.event(self.client, kind, "acquire", hold=hold, error=why)
        else:
            if code == 5:
                self.history.event(self.client, "info", "lease-lost", hold=hold, source="deadbolt exit 5")
            self.history.event(self.client, "info", "exit", hold=hold, code=code)
        return granted or code == 4

    def stop(self):
        self.stopping.set()
