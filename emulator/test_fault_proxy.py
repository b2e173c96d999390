"""Unit tests of the fault-injecting TCP proxy (fault_proxy.py).

Run: python3 -m unittest discover -s emulator -p 'test_*.py'
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fault_proxy  # noqa: E402


class EchoServer:
    """Echoes every byte back; remembers what it received."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        with c:
            while True:
                try:
                    data = c.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                with self.lock:
                    self.received += data
                c.sendall(data)

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)   # wakes the accept()
        except OSError:
            pass
        self.sock.close()


class ProxyTest(unittest.TestCase):

    def setUp(self):
        self.echo = EchoServer()
        self.proxy = fault_proxy.FaultProxy("127.0.0.1", self.echo.port, seed=1)
        self.port, self.cport = self.proxy.start()

    def tearDown(self):
        self.proxy.stop()
        self.echo.close()

    def control(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.cport, timeout=5)
        c.request(method, path, json.dumps(body) if body is not None else None)
        r = c.getresponse()
        out = (r.status, json.loads(r.read()))
        c.close()
        return out

    def ok(self, path, body=None):
        status, obj = self.control("POST", path, body)
        self.assertEqual(status, 200, obj)
        return obj

    def client(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def roundtrip(self, s, data):
        """Send data, read it back; return the seconds it took."""
        t0 = time.monotonic()
        s.sendall(data)
        got = b""
        while len(got) < len(data):
            chunk = s.recv(65536)
            self.assertTrue(chunk, "connection closed early")
            got += chunk
        self.assertEqual(got, data)
        return time.monotonic() - t0

    def test_plain_forwarding(self):
        with self.client() as s:
            self.roundtrip(s, b"hello")
            self.roundtrip(s, b"x" * 200000)
        # the pump counts a slice after sending it: wait for the last one
        until = time.monotonic() + 2
        while self.proxy.state()["counts"]["bytes_down"] < 200005 and \
                time.monotonic() < until:
            time.sleep(0.01)
        st = self.proxy.state()
        self.assertEqual(st["counts"]["accepted"], 1)
        self.assertEqual(st["counts"]["bytes_up"], 200005)
        self.assertEqual(st["counts"]["bytes_down"], 200005)

    def test_latency_each_direction(self):
        self.ok("/_proxy/direction", {"direction": "up", "latency_ms": 100})
        self.ok("/_proxy/direction", {"direction": "down", "latency_ms": 50,
                                      "jitter_ms": 10})
        with self.client() as s:
            rtts = [self.roundtrip(s, b"ping") for _ in range(3)]
        # 100 + 50 +- 10 ms; only the lower bound is certain under load
        self.assertGreaterEqual(min(rtts), 0.139)
        st = self.control("GET", "/_proxy/state")[1]["directions"]
        self.assertEqual((st["up"]["latency_ms"], st["down"]["jitter_ms"]),
                         (100, 10))

    def test_latency_keeps_order(self):
        self.ok("/_proxy/direction", {"latency_ms": 20, "jitter_ms": 20})
        with self.client() as s:
            data = b"".join(b"%05d" % i for i in range(200))
            for i in range(0, len(data), 50):
                s.sendall(data[i:i + 50])
                time.sleep(0.001)
            got = b""
            while len(got) < len(data):
                got += s.recv(65536)
        self.assertEqual(got, data)

    def test_bandwidth_limit(self):
        self.ok("/_proxy/direction", {"direction": "down",
                                      "bytes_per_sec": 100000})
        with self.client() as s:
            took = self.roundtrip(s, b"y" * 30000)
        self.assertGreaterEqual(took, 0.25)

    def test_stall_heals(self):
        with self.client() as s:
            self.roundtrip(s, b"before")
            # the stall starts while the control request is served: after
            # t0, however late its answer comes back on a loaded machine
            t0 = time.monotonic()
            self.ok("/_proxy/stall", {"ms": 400})
            s.sendall(b"during")
            s.settimeout(0.2)
            with self.assertRaises(socket.timeout):
                s.recv(100)
            self.assertEqual(self.echo.received, b"before")
            s.settimeout(5)
            self.assertEqual(s.recv(100), b"during")
            self.assertGreaterEqual(time.monotonic() - t0, 0.39)

    def test_stall_one_direction(self):
        with self.client() as s:
            t0 = time.monotonic()
            self.ok("/_proxy/stall", {"ms": 300, "direction": "down"})
            s.sendall(b"req")
            # the request goes through ...
            until = time.monotonic() + 5
            while self.echo.received != b"req" and time.monotonic() < until:
                time.sleep(0.01)
            self.assertEqual(self.echo.received, b"req")
            # ... the answer waits for the end of the stall
            s.settimeout(5)
            self.assertEqual(s.recv(100), b"req")
            self.assertGreaterEqual(time.monotonic() - t0, 0.29)

    def test_reset_live(self):
        with self.client() as s:
            self.roundtrip(s, b"a")
            out = self.ok("/_proxy/reset", {"side": "client"})
            self.assertEqual(out["reset"], 1)
            with self.assertRaises(ConnectionResetError):
                s.recv(100)
        self.assertEqual(self.proxy.state()["live"], 0)

    def test_armed_reset_on_answer(self):
        self.ok("/_proxy/arm", {"match": "POST /flush", "on": "answer",
                                "action": "reset"})
        with self.client() as s:
            self.roundtrip(s, b"GET /stats")   # no match: forwarded
            s.sendall(b"POST /flush")
            with self.assertRaises(ConnectionResetError):
                while s.recv(100):
                    pass
        # the server got the request; only its answer was lost
        self.assertEqual(self.echo.received, b"GET /statsPOST /flush")
        self.assertEqual(self.proxy.state()["counts"]["reset"], 1)
        self.assertEqual(self.proxy.state()["triggers"], [])

    def test_armed_reset_on_request(self):
        self.ok("/_proxy/arm", {"match": "POST /flush", "action": "reset"})
        with self.client() as s:
            s.sendall(b"POST /flush")
            with self.assertRaises(ConnectionResetError):
                while s.recv(100):
                    pass
        time.sleep(0.05)
        self.assertEqual(self.echo.received, b"")

    def test_half_open_never_answers_never_closes(self):
        self.ok("/_proxy/arm", {"match": "POST", "action": "half_open"})
        with self.client() as s:
            s.sendall(b"POST /x")
            s.settimeout(0.5)
            with self.assertRaises(socket.timeout):
                s.recv(100)    # neither data, nor FIN, nor RST
            s.sendall(b"more")  # still accepted, dropped
            with self.assertRaises(socket.timeout):
                s.recv(100)
            self.assertEqual(self.proxy.state()["held_half_open"], 1)
        self.assertEqual(self.echo.received, b"")
        # the client closed: the hold ends
        until = time.monotonic() + 2
        while self.proxy.state()["held_half_open"] and time.monotonic() < until:
            time.sleep(0.02)
        self.assertEqual(self.proxy.state()["held_half_open"], 0)

    def test_half_open_live(self):
        with self.client() as s:
            self.roundtrip(s, b"a")
            self.assertEqual(self.ok("/_proxy/half_open")["half_open"], 1)
            s.sendall(b"b")
            s.settimeout(0.3)
            with self.assertRaises(socket.timeout):
                s.recv(100)

    def test_blackhole(self):
        self.ok("/_proxy/direction", {"direction": "up", "blackhole": True})
        with self.client() as s:
            s.sendall(b"lost")
            s.settimeout(0.3)
            with self.assertRaises(socket.timeout):
                s.recv(100)
        self.assertEqual(self.echo.received, b"")
        self.assertEqual(self.proxy.state()["counts"]["blackholed_bytes"], 4)

    def test_clear(self):
        self.ok("/_proxy/direction", {"latency_ms": 2000})
        self.ok("/_proxy/arm", {"match": "x"})
        self.ok("/_proxy/clear")
        st = self.proxy.state()
        self.assertEqual(st["directions"]["up"]["latency_ms"], 0)
        self.assertEqual(st["triggers"], [])
        with self.client() as s:
            # 4 s with the latency still there; room for a loaded machine
            self.assertLess(self.roundtrip(s, b"x"), 2.0)

    def test_refused_target(self):
        self.echo.close()
        time.sleep(0.05)
        # the reset can beat connect() back to the client on a loaded
        # machine: it is the same outcome, wherever the client sees it
        with self.assertRaises(ConnectionError):
            with self.client() as s:
                s.sendall(b"x")
                s.recv(10)
        self.assertEqual(self.proxy.state()["counts"]["refused"], 1)

    def test_control_errors(self):
        self.assertEqual(self.control("POST", "/_proxy/direction",
                                      {"direction": "sideways"})[0], 400)
        self.assertEqual(self.control("POST", "/_proxy/direction",
                                      {"latency_ms": -1})[0], 400)
        self.assertEqual(self.control("POST", "/_proxy/arm",
                                      {"match": "x", "action": "explode"})[0], 400)
        self.assertEqual(self.control("POST", "/_proxy/stall", {})[0], 400)
        self.assertEqual(self.control("GET", "/_proxy/nothing")[0], 404)


class LifetimeTest(unittest.TestCase):

    def test_max_lifetime_ends_it(self):
        here = os.path.dirname(os.path.abspath(__file__))
        with tempfile.TemporaryDirectory() as tmp:
            pf = os.path.join(tmp, "port")
            t0 = time.monotonic()
            p = subprocess.run(
                [sys.executable, os.path.join(here, "fault_proxy.py"),
                 "--target", "127.0.0.1:9", "--port-file", pf,
                 "--max-lifetime", "0.5"],
                stderr=subprocess.PIPE, timeout=10)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(os.path.exists(pf))
            self.assertLess(time.monotonic() - t0, 5)

    def test_lifetime_must_be_bounded(self):
        here = os.path.dirname(os.path.abspath(__file__))
        p = subprocess.run(
            [sys.executable, os.path.join(here, "fault_proxy.py"),
             "--target", "127.0.0.1:9", "--max-lifetime", "0"],
            stderr=subprocess.PIPE, timeout=10)
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
