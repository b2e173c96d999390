#!/usr/bin/env python3
"""Fault-injecting TCP proxy for lancelsm's network-fault tests.

Sits between a client (lancelsm) and a server (the LSM route emulator) and
forwards bytes both ways, with faults set through an HTTP control API on a
port of its own.  This machine's kernel has no netem qdisc and no package
brings toxiproxy, so this is the stand-in.  Python 3 standard library only.

Directions: "up" is client -> server (requests), "down" is server ->
client (answers).  Per direction: latency with jitter, a bandwidth limit,
a stall (a partition that heals after N ms: bytes wait, nothing is lost),
a blackhole (bytes dropped silently).  Per connection: a reset (RST via
SO_LINGER 0, to the client, the server or both) and a half-open drop (the
proxy stops forwarding and never answers or closes the client's side),
either now for every live connection or armed for the next request whose
bytes contain a given string.

Start:
    python3 emulator/fault_proxy.py --target HOST:PORT --port 0 \
        --port-file PATH --control-port 0 --control-port-file PATH \
        [--host 127.0.0.1] [--max-lifetime SECONDS] [--seed N]

See emulator/README.md ("Fault proxy") for the control API.
"""

import argparse
import collections
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIRECTIONS = ("up", "down")
ACTIONS = ("reset", "half_open")
CHUNK = 65536
TICK = 0.02   # seconds: how often blocked loops look at the settings again


class ProxyError(Exception):
    """A control request the proxy refuses (400 or 404)."""

    def __init__(self, msg, status=400):
        super().__init__(msg)
        self.status = status


class Direction:
    """The faults of one direction.  Read by the pumps under the proxy's
    lock; changed by the control API."""

    def __init__(self):
        self.clear()

    def clear(self):
        self.latency_ms = 0
        self.jitter_ms = 0
        self.bytes_per_sec = 0      # 0: unlimited
        self.stall_until = 0.0      # time.monotonic(); bytes wait until then
        self.blackhole = False      # bytes read and dropped

    def state(self):
        left = max(0.0, self.stall_until - time.monotonic())
        return {"latency_ms": self.latency_ms, "jitter_ms": self.jitter_ms,
                "bytes_per_sec": self.bytes_per_sec,
                "stall_ms_left": int(left * 1000), "blackhole": self.blackhole}


def reset_socket(sock):
    """Close sock with an RST instead of a FIN (SO_LINGER on, 0 s)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class Pump:
    """One direction of one connection: a reader that stamps each chunk
    with its delivery time (latency and jitter, order kept), and a writer
    that delivers when due, not while stalled, at most at the bandwidth
    limit.  The end of the stream (FIN) is delivered like a chunk."""

    def __init__(self, conn, name, src, dst):
        self.conn = conn
        self.name = name
        # an RST read from one side is passed on to the other
        self.dst_side = "server" if name == "up" else "client"
        self.src, self.dst = src, dst
        self.queue = collections.deque()   # (due, bytes); b"" is the FIN
        self.cond = threading.Condition()
        self.last_due = 0.0

    def start(self):
        for fn in (self._read, self._write):
            threading.Thread(target=fn, daemon=True,
                             name="%s-%d-%s" % (fn.__name__, self.conn.id,
                                                self.name)).start()

    def _read(self):
        proxy = self.conn.proxy
        while self.conn.forwarding():
            try:
                r, _, _ = select.select([self.src], [], [], TICK)
                if not r:
                    continue
                data = self.src.recv(CHUNK)
            except ConnectionResetError:
                self.conn.reset(self.dst_side)
                return
            except (OSError, ValueError):
                self.conn.end()
                return
            if data and self.name == "up" and proxy.trigger(self.conn, data):
                return
            with proxy.lock:
                d = proxy.directions[self.name]
                if d.blackhole and data:
                    proxy.counts["blackholed_bytes"] += len(data)
                    continue
                delay = d.latency_ms + proxy.rng.uniform(-d.jitter_ms,
                                                         d.jitter_ms)
            due = max(self.last_due, time.monotonic() + max(0.0, delay) / 1000)
            self.last_due = due
            with self.cond:
                self.queue.append((due, data))
                self.cond.notify()
            if not data:
                return

    def _next_chunk(self):
        """Wait until the head chunk is due and no stall holds it; return
        it, or None once the connection stops forwarding."""
        proxy = self.conn.proxy
        while self.conn.forwarding():
            with self.cond:
                if not self.queue:
                    self.cond.wait(TICK)
                    continue
                due, data = self.queue[0]
            with proxy.lock:
                stall = proxy.directions[self.name].stall_until
            wait = max(due, stall) - time.monotonic()
            if wait > 0:
                time.sleep(min(wait, TICK))
                continue
            with self.cond:
                self.queue.popleft()
            return data
        return None

    def _send(self, data):
        """Send data, paced by the direction's bandwidth limit."""
        proxy = self.conn.proxy
        while data:
            with proxy.lock:
                bps = proxy.directions[self.name].bytes_per_sec
            n = len(data) if bps <= 0 else max(1, min(len(data), bps // 50))
            self.dst.sendall(data[:n])
            with proxy.lock:
                proxy.counts["bytes_" + self.name] += n
            data = data[n:]
            if bps > 0:
                time.sleep(n / bps)

    def _write(self):
        while True:
            data = self._next_chunk()
            if data is None:
                return
            if self.name == "down" and self.conn.proxy.trigger_answer(self.conn):
                return
            try:
                if not data:
                    self.dst.shutdown(socket.SHUT_WR)
                    self.conn.half_closed(self.name)
                    return
                self._send(data)
            except (OSError, ValueError):
                self.conn.end()
                return


class Conn:
    """One proxied connection: the client's socket, the server's, and
    their two pumps.  state: open, closed, reset or half_open."""

    def __init__(self, proxy, cid, client, server):
        self.proxy, self.id = proxy, cid
        self.client, self.server = client, server
        self.state = "open"
        self.fins = set()
        self.armed = None    # the trigger waiting for this request's answer
        self.lock = threading.Lock()
        self.pumps = [Pump(self, "up", client, server),
                      Pump(self, "down", server, client)]

    def start(self):
        for p in self.pumps:
            p.start()

    def forwarding(self):
        return self.state == "open" and not self.proxy.stopping.is_set()

    def half_closed(self, name):
        with self.lock:
            self.fins.add(name)
            done = len(self.fins) == 2
        if done:
            self.end()

    def end(self):
        """Close both sides normally (FIN)."""
        with self.lock:
            if self.state != "open":
                return
            self.state = "closed"
        for s in (self.client, self.server):
            try:
                s.close()
            except OSError:
                pass
        self.proxy.forget(self)

    def reset(self, side):
        """RST to the client, the server or both; the other side, if any,
        is closed normally."""
        with self.lock:
            if self.state != "open":
                return False
            self.state = "reset"
        for name, s in (("client", self.client), ("server", self.server)):
            if side in (name, "both"):
                reset_socket(s)
            else:
                try:
                    s.close()
                except OSError:
                    pass
        self.proxy.forget(self)
        return True

    def drop_half_open(self):
        """Stop forwarding for good: the server's side is closed, the
        client's is held open and never answered, never closed, until the
        client closes it or the proxy stops.  No RST, no FIN."""
        with self.lock:
            if self.state != "open":
                return False
            self.state = "half_open"
        try:
            self.server.close()
        except OSError:
            pass
        threading.Thread(target=self._hold, daemon=True,
                         name="hold-%d" % self.id).start()
        return True

    def _hold(self):
        """Read and drop whatever the client sends until it closes."""
        while not self.proxy.stopping.is_set():
            try:
                r, _, _ = select.select([self.client], [], [], 0.1)
                if r and not self.client.recv(CHUNK):
                    break
            except (OSError, ValueError):
                break
        try:
            self.client.close()
        except OSError:
            pass
        self.proxy.forget(self)


class FaultProxy:
    """The proxy: a listener, its connections, the faults, and the
    control API server."""

    def __init__(self, target_host, target_port, host="127.0.0.1", port=0,
                 control_port=0, seed=None):
        self.target = (target_host, target_port)
        self.host, self.port, self.control_port = host, port, control_port
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self.rng = random.Random(seed)
        self.directions = {d: Direction() for d in DIRECTIONS}
        self.conns = {}
        self.next_id = 0
        self.triggers = []     # armed {"match", "on", "action", "side", "count"}
        self.counts = collections.Counter()
        self.listener = None
        self.control = None

    # ---- connections -----------------------------------------------------

    def _accept_loop(self):
        while not self.stopping.is_set():
            try:
                r, _, _ = select.select([self.listener], [], [], 0.05)
                if not r:
                    continue
                client, _ = self.listener.accept()
            except (OSError, ValueError):
                return
            threading.Thread(target=self._open, args=(client,),
                             daemon=True).start()

    def _open(self, client):
        try:
            server = socket.create_connection(self.target, timeout=5)
            server.settimeout(None)
        except OSError:
            with self.lock:
                self.counts["refused"] += 1
            reset_socket(client)    # as a refused connection looks
            return
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.lock:
            self.next_id += 1
            conn = Conn(self, self.next_id, client, server)
            self.conns[conn.id] = conn
            self.counts["accepted"] += 1
        conn.start()

    def forget(self, conn):
        """conn is over (closed, reset, or its half-open hold ended)."""
        with self.lock:
            if self.conns.get(conn.id) is conn:
                del self.conns[conn.id]

    def live(self, state="open"):
        with self.lock:
            return [c for c in self.conns.values() if c.state == state]

    # ---- triggers --------------------------------------------------------

    def _act(self, conn, t):
        with self.lock:
            self.counts[t["action"]] += 1
        if t["action"] == "reset":
            conn.reset(t["side"])
        else:
            conn.drop_half_open()

    def _take_trigger(self, data):
        with self.lock:
            for t in self.triggers:
                if t["match"].encode() in data:
                    t["count"] -= 1
                    if t["count"] == 0:
                        self.triggers.remove(t)
                    return dict(t)
        return None

    def trigger(self, conn, data):
        """A request chunk was read from the client: act on an armed
        trigger it matches.  Returns True when the chunk is not to be
        forwarded (the trigger acted on the request)."""
        t = self._take_trigger(data)
        if t is None:
            return False
        if t["on"] == "answer":
            conn.armed = t
            return False
        self._act(conn, t)
        return True

    def trigger_answer(self, conn):
        """The server's answer to an armed request is about to go to the
        client: act instead.  Returns True when it acted."""
        t, conn.armed = conn.armed, None
        if t is None:
            return False
        self._act(conn, t)
        return True

    # ---- control ---------------------------------------------------------

    def set_direction(self, req):
        names = _directions(req.get("direction", "both"))
        vals = {}
        for k in ("latency_ms", "jitter_ms", "bytes_per_sec"):
            if k in req:
                vals[k] = _int(req[k], k)
        if "blackhole" in req:
            vals["blackhole"] = _bool(req["blackhole"], "blackhole")
        with self.lock:
            for n in names:
                for k, v in vals.items():
                    setattr(self.directions[n], k, v)

    def stall(self, req):
        ms = _int(req.get("ms"), "ms")
        with self.lock:
            for n in _directions(req.get("direction", "both")):
                self.directions[n].stall_until = time.monotonic() + ms / 1000.0

    def reset_live(self, req):
        side = _side(req.get("side", "both"))
        n = sum(1 for c in self.live() if c.reset(side))
        with self.lock:
            self.counts["reset"] += n
        return n

    def half_open_live(self):
        n = sum(1 for c in self.live() if c.drop_half_open())
        with self.lock:
            self.counts["half_open"] += n
        return n

    def arm(self, req):
        match = req.get("match")
        if not isinstance(match, str) or not match:
            raise ProxyError("match must be a non-empty string")
        on = req.get("on", "request")
        if on not in ("request", "answer"):
            raise ProxyError("on must be request or answer")
        action = req.get("action", "reset")
        if action not in ACTIONS:
            raise ProxyError("action must be one of %s" % ", ".join(ACTIONS))
        count = _int(req.get("count", 1), "count", 1)
        with self.lock:
            self.triggers.append({"match": match, "on": on, "action": action,
                                  "side": _side(req.get("side", "client")),
                                  "count": count})

    def clear(self):
        """Plain forwarding again, counters zeroed; connections already
        reset or held half-open stay as they are."""
        with self.lock:
            for d in self.directions.values():
                d.clear()
            self.triggers = []
            self.counts = collections.Counter()

    def state(self):
        with self.lock:
            return {"target": "%s:%d" % self.target,
                    "directions": {n: d.state()
                                   for n, d in self.directions.items()},
                    "triggers": [dict(t) for t in self.triggers],
                    "live": len([c for c in self.conns.values()
                                 if c.state == "open"]),
                    "held_half_open": len([c for c in self.conns.values()
                                           if c.state == "half_open"]),
                    "counts": dict(self.counts)}

    # ---- lifetime ----------------------------------------------------------

    def start(self):
        """Listen on both ports and serve in background threads; return
        (port, control_port)."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((self.host, self.port))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        cls = type("ControlServer", (ControlServer,),
                   {"address_family": family})
        self.control = cls((self.host, self.control_port), ControlHandler)
        self.control.proxy = self
        self.control_port = self.control.server_address[1]
        threading.Thread(target=self._accept_loop, daemon=True,
                         name="accept").start()
        threading.Thread(target=self.control.serve_forever,
                         kwargs={"poll_interval": 0.05}, daemon=True,
                         name="control").start()
        return self.port, self.control_port

    def stop(self):
        """Stop listening and close every connection (FIN), held
        half-open ones included."""
        self.stopping.set()
        if self.control is not None:
            self.control.shutdown()
            self.control.server_close()
        if self.listener is not None:
            self.listener.close()
        with self.lock:
            conns = list(self.conns.values())
        for c in conns:
            for s in (c.client, c.server):
                try:
                    s.close()
                except OSError:
                    pass


def _int(v, name, minimum=0):
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ProxyError("%s must be an integer >= %d" % (name, minimum))
    return v


def _bool(v, name):
    if not isinstance(v, bool):
        raise ProxyError("%s must be a boolean" % name)
    return v


def _directions(v):
    if v == "both":
        return DIRECTIONS
    if v not in DIRECTIONS:
        raise ProxyError("direction must be up, down or both")
    return (v,)


def _side(v):
    if v not in ("client", "server", "both"):
        raise ProxyError("side must be client, server or both")
    return v


class ControlServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class ControlHandler(BaseHTTPRequestHandler):
    """/_proxy/...: JSON in and out."""

    protocol_version = "HTTP/1.1"
    server_version = "lsm-fault-proxy/1.0"
    sys_version = ""

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def _dispatch(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        try:
            req = json.loads(raw) if raw.strip() else {}
            if not isinstance(req, dict):
                raise ProxyError("request body must be a JSON object")
            status, obj = 200, self._handle(method, self.path, req)
        except ValueError:
            status, obj = 400, {"error": "request body is not valid JSON"}
        except ProxyError as e:
            status, obj = e.status, {"error": str(e)}
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self, method, path, req):
        p = self.server.proxy
        ok = {"ok": True}
        route = (method, path.rstrip("/"))
        if route == ("GET", "/_proxy/state"):
            return p.state()
        if route == ("POST", "/_proxy/direction"):
            p.set_direction(req)
            return ok
        if route == ("POST", "/_proxy/stall"):
            p.stall(req)
            return ok
        if route == ("POST", "/_proxy/reset"):
            return {"ok": True, "reset": p.reset_live(req)}
        if route == ("POST", "/_proxy/half_open"):
            return {"ok": True, "half_open": p.half_open_live()}
        if route == ("POST", "/_proxy/arm"):
            p.arm(req)
            return ok
        if route == ("POST", "/_proxy/clear"):
            p.clear()
            return ok
        raise ProxyError("no control route %s %s" % (method, path), 404)


def _write_port(path, port):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as fh:
        fh.write("%d\n" % port)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description="fault-injecting TCP proxy")
    ap.add_argument("--target", required=True, help="HOST:PORT to forward to")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--control-port", type=int, default=0)
    ap.add_argument("--control-port-file")
    ap.add_argument("--seed", type=int, help="seed of the jitter")
    ap.add_argument("--max-lifetime", type=float, default=600,
                    help="exit after this many seconds (default 600)")
    a = ap.parse_args(argv)
    host, _, port = a.target.rpartition(":")
    if not host or not port.isdigit():
        ap.error("--target wants HOST:PORT")
    if a.max_lifetime <= 0:
        ap.error("--max-lifetime wants seconds > 0: the proxy always ends")
    proxy = FaultProxy(host.strip("[]"), int(port), a.host, a.port,
                       a.control_port, a.seed)
    port, cport = proxy.start()
    if a.control_port_file:
        _write_port(a.control_port_file, cport)
    if a.port_file:
        _write_port(a.port_file, port)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda s, f: done.set())
    signal.signal(signal.SIGINT, lambda s, f: done.set())
    sys.stderr.write("fault-proxy %s:%d -> %s, control port %d\n"
                     % (a.host, port, a.target, cport))
    sys.stderr.flush()
    done.wait(a.max_lifetime)
    proxy.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
