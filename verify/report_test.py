#!/usr/bin/env python3
"""The report's tests: a saved campaign made of hand-made histories is written into a page with the
markers; the generated part says what the checker found (a lost update under one token is named
fencing's limit, with the shortest excerpt), and the hand-written text around the markers stays."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import checker  # noqa: E402
import report  # noqa: E402
from checker_test import History  # noqa: E402


def two_holders_one_token():
    """A forced failover: c1 and c2 both granted token 7, both read 6 and write 7; one increment lost."""
    h = History().increment("c3.1", 0, 6, 5)
    h.event(20, "info", "start", process="nemesis", nemesis="failover-force")
    h.event(30, "info", "stop", process="nemesis", nemesis="failover-force")
    h.acquire("c1.1", 40, 50, 7, lease_ms=1500)
    h.acquire("c2.1", 41, 52, 7, lease_ms=1500)
    h.op("c1.1", "read", 53, 54, 7, 6).op("c2.1", "read", 55, 56, 7, 6)
    h.op("c1.1", "write", 57, 58, 7, 7).op("c2.1", "write", 59, 60, 7, 7)
    h.event(61, "invoke", "release", "c1.1").event(62, "invoke", "release", "c2.1")
    h.event(5000, "info", "stopping", process="runner")
    return h.final(5100, 7)


def saved_campaign(directory, history, scenario):
    folder = os.path.join(directory, scenario.replace(":", "_"))
    os.makedirs(folder)
    path = os.path.join(folder, "history.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(e) + "\n" for e in sorted(history.events, key=lambda e: e["time"]))
    result = checker.check(checker.load(path), 1000, 6000)
    result.update(scenario=scenario, folder=os.path.basename(folder), expected="valid", as_expected=False,
                  recovery_bound_ms=6000)
    with open(os.path.join(folder, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f)
    with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"meta": {"deadbolt": "deadbolt", "source": "test", "clients": 2, "seconds": 5},
                   "results": [{"scenario": scenario, "folder": os.path.basename(folder)}]}, f)


class Report(unittest.TestCase):
    def test_generated_part_replaced_and_the_rest_kept(self):
        with tempfile.TemporaryDirectory() as tmp:
            results, docs = os.path.join(tmp, "results"), os.path.join(tmp, "docs")
            os.makedirs(docs)
            saved_campaign(results, two_holders_one_token(), "cluster:failover-force")
            page = os.path.join(docs, "verification.md")
            with open(page, "w", encoding="utf-8") as f:
                f.write(f"hand-written before\n\n{report.BEGIN}\nold results\n{report.END}\n\nhand-written after\n")
            with open(os.devnull, "w") as null:
                stdout, sys.stdout = sys.stdout, null
                try:
                    report.publish(results, docs)
                finally:
                    sys.stdout = stdout
            with open(page, encoding="utf-8") as f:
                text = f.read()
        self.assertTrue(text.startswith("hand-written before\n"))
        self.assertTrue(text.endswith("hand-written after\n"))
        self.assertNotIn("old results", text)
        self.assertIn("| `cluster:failover-force` | **violations (UNEXPECTED)** |", text)
        self.assertIn("two holders had the same token, which fencing cannot tell apart", text)
        self.assertIn("[mutual exclusion] c2.1 was granted the lock while c1.1 held it", text)
        self.assertIn("c2       c2.1     acquire ok token=7", text)

    def test_page_without_markers_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            results, docs = os.path.join(tmp, "results"), os.path.join(tmp, "docs")
            os.makedirs(docs)
            saved_campaign(results, two_holders_one_token(), "cluster:failover-force")
            with open(os.path.join(docs, "verification.md"), "w", encoding="utf-8") as f:
                f.write("no markers\n")
            with self.assertRaises(SystemExit):
                report.publish(results, docs)


if __name__ == "__main__":
    unittest.main()
