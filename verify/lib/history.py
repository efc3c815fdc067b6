"""The history being recorded: JSON lines appended by the harness's threads, one event per line.

Events from client processes arrive already stamped (they read the clock themselves); the harness
stamps its own. CLOCK_MONOTONIC is shared by every process on the machine, so one clock orders all."""
import json
import threading
import time


def now():
    return time.monotonic_ns()


class History:
    def __init__(self, path):
        self._file = open(path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def record(self, event):
        line = json.dumps(event, sort_keys=True) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def event(self, process, kind, f, **fields):
        """Records an event of the harness itself, stamped now; returns it."""
        event = {"time": now(), "process": process, "type": kind, "f": f, **fields}
        self.record(event)
        return event

    def close(self):
        self._file.close()
