#!/usr/bin/env python3
"""The checker's own tests: hand-made histories, broken ones that it must flag and correct ones that
it must accept. A checker that cannot fail is worthless."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402

MS = checker.NS_PER_MS


class History:
    """Builds a history; times are given in milliseconds."""

    def __init__(self):
        self.events = []

    def event(self, t, kind, f, hold=None, process=None, **fields):
        e = {"time": int(t * MS), "type": kind, "f": f, "process": process or (hold.split(".")[0] if hold else "runner")}
        if hold:
            e["hold"] = hold
        e.update(fields)
        self.events.append(e)
        return self

    def acquire(self, hold, asked, granted, token, lease_ms=1000, wait_ms=None):
        self.event(asked, "invoke", "acquire", hold, lease_deadline=int((asked + lease_ms) * MS),
                   **({"deadline": int((asked + wait_ms) * MS)} if wait_ms is not None else {}))
        return self.event(granted, "ok", "acquire", hold, token=token)

    def op(self, hold, f, start, end, token, value, outcome="ok", writer=None, **fields):
        self.event(start, "invoke", f, hold, token=token, **({"value": value} if f == "write" else {}),
                   **({"writer": writer} if writer else {}))
        return self.event(end, outcome, f, hold, token=token, value=value, **fields)

    def increment(self, hold, t, token, value):
        """A whole hold: acquire, fenced read of value, fenced write of value + 1, release."""
        self.acquire(hold, t, t + 1, token)
        self.op(hold, "read", t + 2, t + 3, token, value)
        self.op(hold, "write", t + 4, t + 5, token, value + 1)
        return self.event(t + 6, "invoke", "release", hold)

    def final(self, t, value):
        return self.event(t, "ok", "final-read", value=value)

    def check(self, **options):
        return checker.check(sorted(self.events, key=lambda e: e["time"]), **options)

    def fault(self, start, stop, nemesis="partition-drop"):
        self.event(start, "info", "start", process="nemesis", nemesis=nemesis)
        return self.event(stop, "info", "stop", process="nemesis", nemesis=nemesis)


def checks_failed(result):
    return sorted({v["check"] for v in result["violations"]})


class CorrectHistories(unittest.TestCase):
    def test_unavailability_is_the_grant_gap_a_fault_began_in(self):
        h = History().increment("c1.1", 0, 1, 0).increment("c1.2", 100, 2, 1)
        h.event(150, "info", "start", process="nemesis").event(200, "info", "stop", process="nemesis")
        h.increment("c1.3", 900, 3, 2).final(1000, 3)
        figures = h.check()["figures"]
        self.assertEqual(figures["unavailable_ms_max"], 800.0)  # grants at 101 and 901
        self.assertEqual(figures["recovery_ms_max"], 701.0)     # heal at 200, grant at 901

    def test_serial_increments_are_valid(self):
        h = History().increment("c1.1", 0, 1, 0).increment("c2.1", 10, 2, 1).increment("c1.2", 20, 3, 2).final(30, 3)
        result = h.check()
        self.assertEqual(result["violations"], [])
        self.assertEqual(result["figures"]["holds"], 3)
        self.assertEqual(result["figures"]["writes_acknowledged"], 3)

    def test_store_refusing_one_token_from_a_second_writer_is_justified(self):
        h = History().acquire("c1.1", 0, 1, 5).acquire("c2.1", 2, 3, 5)
        h.op("c1.1", "read", 4, 5, 5, 0, writer="c1:1")
        h.op("c2.1", "read", 6, 7, 5, 0, outcome="fail", writer="c2:1", error="stale")
        h.op("c1.1", "write", 8, 9, 5, 1, writer="c1:1").op("c1.1", "read", 10, 11, 5, 1, writer="c1:1")
        h.final(20, 1)
        result = h.check()
        self.assertNotIn("fencing", checks_failed(result))
        self.assertEqual(result["figures"]["stale_refused"], 1)

    def test_paused_holder_refused_by_fencing_is_valid(self):
        # c1 reads under token 1, is paused past its lease; c2 takes the lock (token 2) and increments;
        # c1 wakes, is told it lost the lease, and its stale write is refused.
        h = History().acquire("c1.1", 0, 1, 1, lease_ms=100)
        h.op("c1.1", "read", 2, 3, 1, 0)
        h.increment("c2.1", 150, 2, 0)
        h.event(300, "info", "lease-lost", "c1.1")
        h.op("c1.1", "write", 301, 302, 1, 1, outcome="fail", error="stale")
        h.final(400, 1)
        result = h.check()
        self.assertEqual(result["violations"], [])
        self.assertEqual(result["figures"]["stale_refused"], 1)
        self.assertEqual(result["unsafe_windows"], [{"holder": "c1.1", "unsafe_ms": 302 - 100, "overlapped": ["c2.1"]}])

    def test_lock_state_reset_excuses_the_overlap(self):
        # The server restarted without persistence at 50 ms: c1's hold was gone, c2 got the lock.
        h = History().acquire("c1.1", 0, 1, 1, lease_ms=10_000)
        h.op("c1.1", "read", 2, 3, 1, 0)
        h.event(50, "info", "reset", process="nemesis")
        h.increment("c2.1", 60, 2, 0)
        h.event(90, "info", "lease-lost", "c1.1")
        h.op("c1.1", "write", 100, 101, 1, 1, outcome="fail", error="stale")
        h.final(200, 1)
        result = h.check()
        self.assertEqual(result["violations"], [])
        self.assertEqual(len(result["unsafe_windows"]), 1)

    def test_unknown_write_widens_the_register_range(self):
        h = History().increment("c1.1", 0, 1, 0)
        h.acquire("c2.1", 10, 11, 2)
        h.op("c2.1", "read", 12, 13, 2, 1)
        h.op("c2.1", "write", 14, 15, 2, 2, outcome="info")
        for final in (1, 2):
            with self.subTest(final=final):
                g = History()
                g.events = list(h.events)
                self.assertEqual(g.final(30, final).check()["violations"], [])

    def test_waiter_that_gives_up_in_time_is_valid(self):
        h = History().event(0, "invoke", "acquire", "c1.1", deadline=500 * MS)
        h.event(520, "fail", "acquire", "c1.1", error="timeout")
        self.assertEqual(h.check()["violations"], [])


class BrokenHistories(unittest.TestCase):
    def test_overlap_with_a_live_lease(self):
        h = History().acquire("c1.1", 0, 1, 1, lease_ms=1000)
        h.op("c1.1", "read", 2, 3, 1, 0)
        h.increment("c2.1", 10, 2, 0)     # granted at 11 while c1's lease runs to 1000
        h.op("c1.1", "write", 30, 31, 1, 1, outcome="fail", error="stale")
        h.final(40, 1)
        self.assertEqual(checks_failed(h.check()), ["mutual exclusion"])

    def test_lost_lease_never_signalled(self):
        h = History().acquire("c1.1", 0, 1, 1, lease_ms=100)
        h.op("c1.1", "read", 2, 3, 1, 0)
        h.increment("c2.1", 150, 2, 0)
        h.op("c1.1", "write", 301, 302, 1, 1, outcome="fail", error="stale")
        h.final(400, 1)
        self.assertEqual(checks_failed(h.check()), ["lease-lost signalled"])

    def test_token_handed_out_twice(self):
        # Both asked before either was granted, so real-time order says nothing: only uniqueness.
        h = History().acquire("c1.1", 0, 2, 7)
        h.op("c1.1", "read", 3, 4, 7, 0).op("c1.1", "write", 5, 6, 7, 1).event(7, "invoke", "release", "c1.1")
        h.acquire("c2.1", 1, 10, 7)
        h.op("c2.1", "read", 11, 12, 7, 1).op("c2.1", "write", 13, 14, 7, 2).event(15, "invoke", "release", "c2.1")
        result = h.final(20, 2).check()
        self.assertEqual(checks_failed(result), ["tokens"])
        self.assertTrue(any("handed out twice" in v["message"] for v in result["violations"]))

    def test_token_not_increasing_in_real_time(self):
        # c2 asked after c1's token 5 was granted, yet got token 3 (a counter reset by a restart).
        h = History().increment("c1.1", 0, 5, 0).increment("c2.1", 10, 3, 1).final(20, 2)
        result = h.check()
        self.assertIn("tokens", checks_failed(result))
        self.assertTrue(any("not larger" in v["message"] for v in result["violations"]))

    def test_store_accepted_a_stale_token(self):
        h = History().acquire("c1.1", 0, 1, 1, lease_ms=100)
        h.op("c1.1", "read", 2, 3, 1, 0)
        h.increment("c2.1", 150, 2, 0)
        h.event(300, "info", "lease-lost", "c1.1")
        h.op("c1.1", "write", 301, 302, 1, 1)  # accepted although token 2 was accepted at 155
        h.final(400, 1)
        result = h.check()
        self.assertEqual(checks_failed(result), ["fencing", "lost update"])  # and c1's write clobbered c2's
        self.assertTrue(any("accepted a write with token 1" in v["message"] for v in result["violations"]))

    def test_store_accepted_one_token_from_two_writers(self):
        # A failover handed token 5 out twice; the store took both holders' increments: one is lost.
        h = History().acquire("c1.1", 0, 1, 5).acquire("c2.1", 2, 3, 5)
        h.op("c1.1", "read", 4, 5, 5, 0, writer="c1:1").op("c2.1", "read", 6, 7, 5, 0, writer="c2:1")
        h.op("c1.1", "write", 8, 9, 5, 1, writer="c1:1").op("c2.1", "write", 10, 11, 5, 1, writer="c2:1")
        h.final(20, 1)
        result = h.check()
        self.assertIn("fencing", checks_failed(result))
        self.assertTrue(any("with token 5 from c2:1 after it had accepted that token from c1:1" in v["message"]
                            for v in result["violations"]))

    def test_store_refused_a_token_that_was_not_stale(self):
        h = History().acquire("c1.1", 0, 1, 1)
        h.op("c1.1", "read", 2, 3, 1, 0, outcome="fail", error="stale")
        h.final(10, 0)
        self.assertEqual(checks_failed(h.check()), ["fencing"])

    def test_lost_update_register_below_acknowledged(self):
        h = History().increment("c1.1", 0, 1, 0).increment("c2.1", 10, 2, 1).final(20, 1)
        self.assertEqual(checks_failed(h.check()), ["lost update"])

    def test_lost_update_two_writes_of_one_value(self):
        # Unfenced read-modify-write: both read 0, both wrote 1; the register says 1, two were acked.
        h = History().acquire("c1.1", 0, 1, 1, lease_ms=100)
        h.op("c1.1", "read", 2, 3, 1, 0)
        h.increment("c2.1", 150, 2, 0)
        h.event(300, "info", "lease-lost", "c1.1")
        h.op("c1.1", "write", 301, 302, 1, 1)
        h.final(400, 2)  # even a register that looks right does not hide the duplicate write
        result = h.check()
        self.assertIn("lost update", checks_failed(result))
        self.assertTrue(any("both wrote 1" in v["message"] for v in result["violations"]))

    def test_register_above_every_possible_write(self):
        h = History().increment("c1.1", 0, 1, 0).final(20, 2)
        self.assertEqual(checks_failed(h.check()), ["lost update"])

    def test_waiter_finished_after_its_deadline(self):
        h = History().event(0, "invoke", "acquire", "c1.1", deadline=500 * MS)
        h.event(2600, "fail", "acquire", "c1.1", error="timeout")
        self.assertEqual(checks_failed(h.check()), ["liveness"])

    def test_waiter_that_never_finished(self):
        h = History().event(0, "invoke", "acquire", "c1.1", deadline=500 * MS)
        h.event(2600, "info", "acquire", "c1.1", error="hung: killed by the harness")
        self.assertEqual(checks_failed(h.check()), ["liveness"])

    def test_a_waiter_in_a_stopped_process_is_allowed_the_time_it_was_stopped(self):
        # l1's process was stopped 4.5 s (pause-client): its waiter, whose deadline fell meanwhile,
        # ends 3.5 s late: allowed. The same lateness in l2, which ran all along: a violation; and
        # l1's waiter may not be late by more than its process was stopped (plus the tolerance).
        def history(late_ms, process):
            h = History()
            h.event(0, "invoke", "acquire", f"{process}.b0.1", deadline=6000 * MS)
            h.event(2000, "info", "start", process="nemesis", nemesis="pause-client", target="l1", seconds=4.5)
            h.event(6500, "info", "stop", process="nemesis", nemesis="pause-client")
            return h.event(6000 + late_ms, "fail", "acquire", f"{process}.b0.1", error="timeout")
        self.assertEqual(checks_failed(history(3500, "l1").check()), [])
        self.assertEqual(checks_failed(history(3500, "l2").check()), ["liveness"])
        result = history(6000, "l1").check()
        self.assertEqual(checks_failed(result), ["liveness"])
        self.assertIn("its process was stopped 4500 ms meanwhile", result["violations"][0]["message"])

    def test_waiter_with_an_unknown_outcome_finished_when_it_ended(self):
        h = History().event(0, "invoke", "acquire", "c1.1", deadline=500 * MS)
        h.event(300, "info", "acquire", "c1.1", error="exit 1")  # in time: valid
        h.event(400, "invoke", "acquire", "c2.1", deadline=900 * MS)
        h.event(2500, "info", "acquire", "c2.1", error="exit 1")  # 1.6 s late
        result = h.check()
        self.assertEqual(checks_failed(result), ["liveness"])
        self.assertEqual(len(result["violations"]), 1)
        self.assertIn("finished 1600 ms after its deadline", result["violations"][0]["message"])


class Recovery(unittest.TestCase):
    """Progress resumes within a bound after each heal."""

    def test_grant_soon_after_the_heal_is_valid(self):
        h = History().increment("c1.1", 0, 1, 0).fault(100, 1100).increment("c1.2", 1500, 2, 1)
        h.event(6000, "info", "stopping").final(6100, 2)
        result = h.check(recovery_bound_ms=1000)
        self.assertEqual(result["violations"], [])
        self.assertEqual(result["recoveries"][0]["recovery_ms"], 401.0)

    def test_no_grant_after_the_heal_fails(self):
        # The run went on 5 s after the heal, and nobody got the lock again.
        h = History().increment("c1.1", 0, 1, 0).fault(100, 1100)
        h.event(1200, "invoke", "acquire", "c2.1", deadline=7200 * MS)
        h.event(6100, "info", "stopping").final(6200, 1)
        result = h.check(recovery_bound_ms=3000)
        self.assertEqual(checks_failed(result), ["recovery"])
        self.assertIn("no grant followed", result["violations"][0]["message"])

    def test_late_grant_after_the_heal_fails(self):
        h = History().increment("c1.1", 0, 1, 0).fault(100, 1100).increment("c1.2", 5100, 2, 1)
        h.event(9000, "info", "stopping").final(9100, 2)
        result = h.check(recovery_bound_ms=3000)
        self.assertEqual(checks_failed(result), ["recovery"])
        self.assertIn("first grant came 4001 ms after it", result["violations"][0]["message"])
        self.assertEqual(h.check()["violations"], [])  # without a bound it is only measured

    def test_next_fault_or_the_end_before_the_bound_excuses(self):
        # The second fault began 500 ms after the first heal; the run stopped 1 s after the second.
        h = History().increment("c1.1", 0, 1, 0).fault(100, 1100).fault(1600, 2000)
        h.event(3000, "info", "stopping").final(3100, 1)
        self.assertEqual(h.check(recovery_bound_ms=3000)["violations"], [])


class LibraryHistories(unittest.TestCase):
    """What the library workload adds: several locks in one history, replica sync windows, the
    library's own lease-lost signals."""

    @staticmethod
    def on(lock, h):
        for e in h.events:
            if "hold" in e or e["f"] == "final-read":
                e["lock"] = lock
        return h

    def test_holds_of_different_locks_may_overlap(self):
        a = self.on("x", History().increment("l1.b0.1", 0, 1, 0).final(20, 1))
        b = self.on("y", History().increment("l1.b1.1", 0, 1, 0).final(20, 1))
        h = History()
        h.events = a.events + b.events
        result = h.check()
        self.assertEqual(result["violations"], [])
        self.assertEqual(result["figures"]["writes_acknowledged"], 2)
        self.assertEqual(result["figures"]["register"], 2)

    def test_overlap_on_one_of_several_locks_is_flagged_for_that_lock(self):
        a = self.on("x", History().acquire("l1.b0.1", 0, 1, 1, lease_ms=1000))
        a.op("l1.b0.1", "read", 2, 3, 1, 0)
        a.increment("l2.b0.1", 10, 2, 0)
        a.op("l1.b0.1", "write", 30, 31, 1, 1, outcome="fail", error="stale")
        self.on("x", a.final(40, 1))
        b = self.on("y", History().increment("l1.b1.1", 0, 1, 0).final(20, 1))
        h = History()
        h.events = a.events + b.events
        result = h.check()
        self.assertEqual(checks_failed(result), ["mutual exclusion"])
        self.assertEqual({v["lock"] for v in result["violations"]}, {"x"})

    def test_register_of_each_lock_is_checked_on_its_own(self):
        # Two increments in all, and two registers summing to 2, but lock y's register lost its one.
        a = self.on("x", History().increment("l1.b0.1", 0, 1, 0).final(20, 2))
        b = self.on("y", History().increment("l1.b1.1", 0, 1, 0).final(20, 0))
        h = History()
        h.events = a.events + b.events
        self.assertEqual(checks_failed(h.check()), ["lost update"])

    def cut(self, h, begin, end, replica_sync=True):
        h.event(begin, "info", "unreplicated", process="nemesis", phase="begin", replica_sync=replica_sync)
        return h.event(end, "info", "unreplicated", process="nemesis", phase="end", replica_sync=replica_sync)

    def test_grant_reported_inside_a_replication_cut(self):
        h = self.cut(History(), 100, 5000)
        h.increment("l1.b0.1", 200, 1, 0).final(6000, 1)
        result = h.check()
        self.assertEqual(checks_failed(result), ["replica sync"])
        self.assertIn("into a cut of every replica's link", result["violations"][0]["message"])

    def test_grants_around_a_replication_cut_are_valid(self):
        h = History().increment("l1.b0.1", 0, 1, 0)            # granted before the cut
        self.cut(h, 100, 5000)
        h.acquire("l1.b0.2", 200, 5200, 2)                     # asked in the cut, granted after it
        h.op("l1.b0.2", "read", 5201, 5202, 2, 1).op("l1.b0.2", "write", 5203, 5204, 2, 2)
        h.event(5205, "invoke", "release", "l1.b0.2")
        h.increment("l1.b0.3", 6000, 3, 2).final(7000, 3)
        self.assertEqual(h.check()["violations"], [])

    def test_replication_cut_without_replica_sync_proves_nothing(self):
        h = self.cut(History(), 100, 5000, replica_sync=False)
        h.increment("l1.b0.1", 200, 1, 0).final(6000, 1)
        self.assertEqual(h.check()["violations"], [])

    def test_lease_lost_signal_of_the_library_counts(self):
        # The paused process's hold outlives its lease; the library's handler tells it (an `info`
        # lease-lost event of the hold, as verify_client records it).
        h = self.on("x", History().acquire("l1.b0.1", 0, 1, 1, lease_ms=100))
        h.op("l1.b0.1", "read", 2, 3, 1, 0)
        h.increment("l2.b0.1", 150, 2, 0)
        h.event(290, "info", "lease-lost", "l1.b0.1", source="on_lease_lost")
        h.op("l1.b0.1", "write", 301, 302, 1, 1, outcome="fail", error="stale")
        self.on("x", h.final(400, 1))
        self.assertEqual(h.check()["violations"], [])
        h.events = [e for e in h.events if e["f"] != "lease-lost"]
        self.assertEqual(checks_failed(h.check()), ["lease-lost signalled"])


class OtherKinds(unittest.TestCase):
    """The semaphore's and the read/write lock's invariants."""

    @staticmethod
    def hold(h, hold, asked, granted, released, lease_ms=1000, **kind):
        h.event(asked, "invoke", "acquire", hold, lease_deadline=int((asked + lease_ms) * MS))
        h.events[-1].update(kind)  # `kind` is also event()'s parameter (the event's type)
        h.event(granted, "ok", "acquire", hold)
        h.event((granted + released) / 2, "ok", "work", hold)
        return h.event(released, "invoke", "release", hold)

    def semaphore(self, *spans, permits=2, reset=None):
        h = History()
        if reset is not None:
            h.event(reset, "info", "reset", process="nemesis")
        for i, (start, end) in enumerate(spans):
            self.hold(h, f"l{i}.s0.1", start, start + 1, end, kind="semaphore", permits=permits)
        return h.check()

    def test_semaphore_within_its_permits_is_valid(self):
        self.assertEqual(self.semaphore((0, 100), (10, 50), (60, 120))["violations"], [])

    def test_semaphore_with_more_holders_than_permits(self):
        result = self.semaphore((0, 100), (10, 90), (20, 80))
        self.assertEqual(checks_failed(result), ["permits"])
        self.assertIn("held 2 of the 2", result["violations"][0]["message"])

    def test_semaphore_reset_forgets_the_holders(self):
        # The server restarted without persistence at 15: the permits taken before are gone.
        self.assertEqual(self.semaphore((0, 100), (10, 90), (20, 80), reset=15)["violations"], [])

    def read_write(self, *holds):
        h = History()
        for i, (mode, start, end) in enumerate(holds):
            self.hold(h, f"l{i}.r0.1", start, start + 1, end, kind="read-write", mode=mode)
        return h.check()

    def test_readers_share(self):
        self.assertEqual(self.read_write(("read", 0, 100), ("read", 10, 90), ("write", 200, 300))["violations"], [])

    def test_writer_while_a_reader_holds(self):
        result = self.read_write(("read", 0, 100), ("write", 10, 90))
        self.assertEqual(checks_failed(result), ["readers-writers"])
        self.assertIn("(write while read)", result["violations"][0]["message"])

    def test_reader_while_a_writer_holds(self):
        self.assertEqual(checks_failed(self.read_write(("write", 0, 100), ("read", 10, 90))), ["readers-writers"])

    def fair(self, *holds, fault=False):
        h = History()
        if fault:
            h.event(1, "info", "start", process="nemesis").event(2, "info", "stop", process="nemesis")
        for i, (asked, granted, released) in enumerate(holds):
            self.hold(h, f"l{i}.f0.1", asked, granted, released, kind="fair")
        return h.check()

    def test_fair_lock_in_arrival_order_is_valid(self):
        self.assertEqual(self.fair((0, 1, 100), (10, 101, 200), (20, 201, 300))["violations"], [])

    def test_fair_lock_overtaken_waiter(self):
        # l2 asked 400 ms after l1 (both waiting for l0), and was granted first.
        result = self.fair((0, 1, 1000), (100, 1301, 1400), (500, 1001, 1300))
        self.assertEqual(checks_failed(result), ["fair order"])
        self.assertIn("l2.f0.1 was granted before l1.f0.1", result["violations"][0]["message"])

    def test_fair_lock_order_within_the_margin_or_with_faults_is_not_judged(self):
        self.assertEqual(self.fair((0, 1, 1000), (100, 1101, 1200), (150, 1001, 1100))["violations"], [])
        self.assertEqual(self.fair((0, 1, 1000), (100, 1301, 1400), (500, 1001, 1300), fault=True)["violations"], [])

    def multi(self, *holds):
        h = History()
        for i, (locks, start, end) in enumerate(holds):
            self.hold(h, f"l{i}.m0.1", start, start + 1, end, kind="multi", **({"locks": locks} if "," in locks else {}))
            for e in h.events[-4:]:
                e["lock"] = locks.split(",")[0]
        return h.check()

    def test_multi_lock_beside_its_members(self):
        self.assertEqual(self.multi(("a,b", 0, 100), ("a", 200, 300), ("b", 250, 400))["violations"], [])
        result = self.multi(("a,b", 0, 100), ("b", 50, 150))  # b taken while the multi lock held it
        self.assertEqual(checks_failed(result), ["mutual exclusion"])
        self.assertEqual({v["lock"] for v in result["violations"]}, {"b"})

    def test_writer_past_its_lease_is_an_unsafe_window(self):
        h = History()
        self.hold(h, "l0.r0.1", 0, 1, 400, lease_ms=100, kind="read-write", mode="write")
        h.event(300, "info", "lease-lost", "l0.r0.1")
        self.hold(h, "l1.r0.1", 150, 151, 200, kind="read-write", mode="read")
        result = h.check()
        self.assertEqual(result["violations"], [])
        self.assertEqual(len(result["unsafe_windows"]), 1)


class Progress(unittest.TestCase):
    """A client whose holds never reach the resource (its command dies first, every time) passes
    every other check: nothing overlaps, nothing is written."""

    def test_client_granted_holds_that_never_reached_the_resource(self):
        h = History().increment("c1.1", 0, 1, 0)
        for i, t in enumerate((100, 200, 300)):
            h.acquire(f"c2.{i + 1}", t, t + 1, 2 + i)
            h.event(t + 5, "invoke", "release", f"c2.{i + 1}")
        h.final(400, 1)
        result = h.check()
        self.assertEqual(checks_failed(result), ["progress"])
        self.assertIn("c2 was granted 3 holds and reached the resource under none", result["violations"][0]["message"])

    def test_one_hold_that_reached_the_resource_is_enough(self):
        h = History().acquire("c1.1", 0, 1, 1).event(5, "invoke", "release", "c1.1")
        h.increment("c1.2", 100, 2, 0).final(200, 1)
        self.assertEqual(h.check()["violations"], [])


class CommandLine(unittest.TestCase):
    def test_exit_status_says_whether_the_history_is_valid(self):
        import json
        import tempfile
        good = History().increment("c1.1", 0, 1, 0).final(10, 1)
        bad = History().increment("c1.1", 0, 1, 0).final(10, 0)
        for history, status in ((good, 0), (bad, 1)):
            with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
                f.writelines(json.dumps(e) + "\n" for e in history.events)
            try:
                with open(os.devnull, "w") as null:
                    stdout, sys.stdout = sys.stdout, null
                    try:
                        self.assertEqual(checker.main([f.name]), status)
                    finally:
                        sys.stdout = stdout
            finally:
                os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
