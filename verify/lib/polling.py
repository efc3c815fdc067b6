"""Waiting for a condition by polling, for the topologies' `settle`."""

import time


def poll_until(check, timeout, stopping=None, every=0.2):
    """True once `check()` is true, False after `timeout` seconds or once the event `stopping` is set."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and not (stopping and stopping.is_set()):
        if check():
            return True
        time.sleep(every)
    return False
