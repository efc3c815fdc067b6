"""Netfilter rules for the network nemeses, on loopback, inside the campaign's private network
namespace only (verify/run enters one with `unshare -n` as root and says so in VERIFY_NETNS): there
every rule is private, and the namespace's tables vanish with the campaign. Outside one, `available()`
is false and the network nemeses skip their faults (recorded in the history): the harness never
touches the host's tables.

A `Rules` object remembers each rule it added and deletes exactly those (`iptables -D` with the same
specification), so a heal undoes one fault and nothing else."""
import os
import subprocess


def available():
    """True inside the campaign's private network namespace, as root, with iptables installed."""
    return os.environ.get("VERIFY_NETNS") == "1" and os.geteuid() == 0 and _iptables() is not None


def _iptables():
    for path in ("/usr/sbin/iptables", "/sbin/iptables"):
        if os.access(path, os.X_OK):
            return path
    return None


class Rules:
    def __init__(self):
        self.added = []  # (table, chain, spec), in the order added

    def add(self, chain, *spec, table="filter", first=True):
        """Inserts (first) or appends one rule; raises on a rule iptables refuses."""
        subprocess.run([_iptables(), "-w", "-t", table, "-I" if first else "-A", chain, *spec],
                       check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.added.append((table, chain, spec))

    def clear(self):
        """Deletes every rule this object added, newest first."""
        while self.added:
            table, chain, spec = self.added.pop()
            subprocess.run([_iptables(), "-w", "-t", table, "-D", chain, *spec],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def drop_port(self, port, target=("DROP",)):
        """Every packet to and from a loopback TCP port: requests and replies (target: DROP hangs the
        connections; REJECT --reject-with tcp-reset refuses them at once)."""
        self.add("INPUT", "-i", "lo", "-p", "tcp", "--dport", str(port), "-j", *target)
        if target[0] == "DROP":
            self.add("INPUT", "-i", "lo", "-p", "tcp", "--sport", str(port), "-j", *target)

    def lose(self, port, probability):
        """Drops each packet to or from the port with this probability (random loss)."""
        for direction in ("--dport", "--sport"):
            self.add("INPUT", "-i", "lo", "-p", "tcp", direction, str(port), "-m", "statistic", "--mode", "random",
                     "--probability", f"{probability:.3f}", "-j", "DROP")

    def cut_uids(self, mark, pairs):
        """Node-to-node partition on one address: for each (uid, port), the connections that processes of
        that uid open to the port get a connection mark (in mangle OUTPUT, on any of their packets, so
        that connections open before the cut are marked too), and every packet of a marked connection,
        either way, is dropped. Removing the DROP rule heals it: the marks stay, harmless."""
        for uid, port in pairs:
            self.add("OUTPUT", "-o", "lo", "-p", "tcp", "--dport", str(port), "-m", "owner", "--uid-owner", str(uid),
                     "-j", "CONNMARK", "--set-mark", str(mark), table="mangle")
        self.add("INPUT", "-i", "lo", "-m", "connmark", "--mark", str(mark), "-j", "DROP")
        self.add("OUTPUT", "-o", "lo", "-m", "connmark", "--mark", str(mark), "-j", "DROP")
