"""A minimal blocking Redis client (RESP2) for the harness: one socket, one command at a time.

The harness must not depend on the library it tests, nor on redis-cli processes per operation."""
import socket
import time


class RedisError(Exception):
    """An error reply (-ERR ...)."""


class Redis:
    def __init__(self, port, host="127.0.0.1", timeout=2.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.file = self.sock.makefile("rb")

    def close(self):
        try:
            self.file.close()
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def call(self, *args):
        """Sends one command and returns its reply; raises RedisError for an error reply and
        OSError (socket.timeout included) when the server does not answer."""
        parts = [str(a).encode() if not isinstance(a, bytes) else a for a in args]
        out = b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
        self.sock.sendall(out)
        return self._reply()

    def _reply(self):
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("connection closed")
        kind, body = line[:1], line[1:-2]
        if kind == b"+":
            return body.decode()
        if kind == b"-":
            raise RedisError(body.decode())
        if kind == b":":
            return int(body)
        if kind == b"$":
            n = int(body)
            if n < 0:
                return None
            data = self.file.read(n + 2)
            if len(data) != n + 2:
                raise ConnectionError("connection closed")
            return data[:-2].decode()
        if kind == b"*":
            n = int(body)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise ConnectionError(f"unexpected reply {line!r}")


def wait_until_up(port, seconds=5.0):
    """True once the server at port answers PING."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with Redis(port, timeout=0.5) as r:
                if r.call("PING") == "PONG":
                    return True
        except (OSError, RedisError):
            time.sleep(0.05)
    return False
