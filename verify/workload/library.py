"""The mutex workload through the C++ library (verify/client, `verify_client`): each client is one
process with one deadbolt client and several workers on it (threads of the blocking API, or chains of
the async API), which repeat acquire → fenced read-modify-write of their lock's register → unlock
until told to stop. One client lives across every fault of the scenario, and many operations share
its connections, as in a long-lived service.

The process prints the history itself (JSON lines); this thread records them, with what only it sees:
the process hung past every bound and was killed (each acquire still open becomes an `info` acquire,
which the checker counts as a waiter that never finished). The process runs in a session of its own,
so that the pause-client nemesis can stop and resume it (`holding_groups`, while a worker holds a lock)."""
import json
import os
import signal
import subprocess
import threading

from history import now

FENCE_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lua", "fenced_write.lua")


class LibraryClient(threading.Thread):
    def __init__(self, name, program, history, url, store_port, log_dir, api="blocking", workers=4, locks=1,
                 lock_name="verify-mutex", lease_ms=0, watchdog_ms=3000, wait_ms=6000, work_ms=100,
                 increments=1, think_ms=0, fenced=True, replica_sync="auto", kind="mutex", permits=2,
                 command_timeout_ms=1000, red_urls=()):
        super().__init__(name=name, daemon=True)
        self.client = name
        self.history = history
        self.wait_ms, self.lease_ms, self.watchdog_ms = wait_ms, lease_ms, watchdog_ms
        self.effective_lease_ms = lease_ms or watchdog_ms  # what a hold starts with
        self.lock_names = [lock_name] if locks <= 1 else [f"{lock_name}-{i}" for i in range(locks)]
        self.command = [program, "--url", url, "--store-port", str(store_port), "--fence-script", FENCE_SCRIPT,
                        "--api", api, "--process", name, "--workers", str(workers), "--locks", str(locks),
                        "--lock", lock_name, "--lease-ms", str(lease_ms), "--watchdog-ms", str(watchdog_ms),
                        "--wait-ms", str(wait_ms), "--work-ms", str(work_ms), "--increments", str(increments),
                        "--think-ms", str(think_ms), "--kind", kind, "--permits", str(permits),
                        # as the CLI workload's `--connect-timeout 1s`, which deadbolt run uses for both
                        "--connect-timeout-ms", "1000", "--command-timeout-ms", str(command_timeout_ms),
                        "--replica-sync", replica_sync, *([] if fenced else ["--unfenced"]),
                        *(["--red-urls", ",".join(red_urls)] if red_urls else [])]
        self.log = open(os.path.join(log_dir, f"{name}.log"), "ab")
        self.process = None
        self.open_holds = set()      # granted, not yet released
        self.open_acquires = {}      # hold -> its acquire invoke, not yet completed
        self.holding_groups = None   # the process group, while a worker holds a lock (pause-client)
        self.started = threading.Event()

    def run(self):
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=self.log, start_new_session=True)
        self.started.set()
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            self.history.record(event)
            self.follow(event)
        self.process.wait()
        self.holding_groups = None
        self.history.event(self.client, "info", "exit", code=self.process.returncode)

    def follow(self, event):
        hold, f, kind = event.get("hold"), event.get("f"), event.get("type")
        if f == "acquire":
            if kind == "invoke":
                self.open_acquires[hold] = event
            else:
                self.open_acquires.pop(hold, None)
                if kind == "ok":
                    self.open_holds.add(hold)
        elif f == "release":
            self.open_holds.discard(hold)
        self.holding_groups = (self.process.pid,) if self.open_holds else None

    def stop(self):
        """Asks the process to stop (each worker finishes the operation it is in); kills it past every
        bound an operation has, and records the acquires it left open as hung."""
        self.started.wait(5)
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGCONT)  # a paused client must hear it
            self.process.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            return
        # An acquire may take its wait plus replica sync's retries (docs/replication.md: up to 18 s).
        bound = self.wait_ms / 1000 + 20
        try:
            self.process.wait(bound)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()
            for hold, invoke in list(self.open_acquires.items()):
                self.history.event(self.client, "info", "acquire", hold=hold, lock=invoke.get("lock"),
                                   error=f"hung: killed by the harness {bound:.0f} s after the stop")
