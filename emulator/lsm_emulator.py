#!/usr/bin/env python3
"""LanceDB LSM route emulator.

A local stand-in for a LanceDB server node's LSM routes (flush_lsm,
compact_lsm, get_lsm_stats) and write spec routes (set_lsm_write_spec,
unset_lsm_write_spec, get_lsm_write_spec), as described in the project's
docs/protocol.md, with a control API under /_emulator/ for deterministic
fault injection and observation.  Python 3 standard library only.

Start:
    python3 emulator/lsm_emulator.py --port 0 --port-file PATH --api-key KEY \
        --table NAME:BUCKETS[:ROWS_PER_SECOND] [--table ...] \
        [--pass-ms MS] [--prefix-max N] [--pool N] [--replay-ms MS] \
        [--seal-rows N] [--rtt-ms MS] [--host 127.0.0.1] \
        [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]

See emulator/README.md for the control API.
"""

import argparse
import collections
import datetime
import json
import os
import select
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROUTES = ("flush_lsm", "compact_lsm", "get_lsm_stats")
# The two spellings of get_lsm_stats (a pending upstream rename): the
# bucket list, the L0 list of a bucket, and the request's rows flag.
STATS_KEYS = {
    "generations": ("buckets", "generations", "include_generation_rows"),
    "sstables": ("table_shards", "sstables", "include_sstable_rows"),
}
# The write spec routes: counted, but shown in /_emulator/counts only once
# called, so that the maintenance routes' count objects keep their shape.
SPEC_ROUTES = ("set_lsm_write_spec", "unset_lsm_write_spec",
               "get_lsm_write_spec")
ALL_ROUTES = ROUTES + SPEC_ROUTES
MAX_SPEC_BUCKETS = 1024
BYTES_PER_ROW = 64
HUGE = 18446744073709551616
LOG_MAX = 100000       # request log entries kept (oldest dropped)
RESPONSE_KEEP = 16384  # bytes of each response body kept in the log

# Error codes of route error bodies {"code": N, "error": "..."}.
CODE_BAD_REQUEST = 1
CODE_UNAUTHORIZED = 2
CODE_TABLE_NOT_FOUND = 3
CODE_LSM_DISABLED = 4
CODE_TABLE_DROPPING = 5
CODE_CONTENTION = 6       # compact could latch no bucket
CODE_REPLAYING = 7        # node replaying the table's WAL
CODE_METHOD = 8           # method not allowed
CODE_NO_ROUTE = 9         # path is no known route
CODE_SPEC_REFUSED = 10    # write spec refused: key, column, indexes, state
CODE_CLAIM_OR_DRAIN = 19  # 421 "table not claimed" and 503 "node is draining"
CODE_INTERNAL = 20        # emulator bug (500)
CODE_VERSION_AHEAD = 21   # a read asked for a version the table never had

# The freshness headers of the SDK's remote table (freshness.rs): a read
# carries the highest version its table handle saw, or a time its answer
# must be no older than; answers carry the version they reflect.
VERSION_HEADER = "x-lancedb-version"
MIN_READ_VERSION_HEADER = "x-lancedb-min-read-version"
MIN_TIMESTAMP_HEADER = "x-lancedb-min-timestamp"
# The routes a server answers from a query node's cache (a read replica);
# the others are answered by the node that writes.
READ_ROUTES = ("get_lsm_stats", "get_lsm_write_spec")

REASONS = {
    200: "OK", 202: "Accepted", 204: "No Content", 301: "Moved Permanently",
    302: "Found", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
    404: "Not Found", 405: "Method Not Allowed", 409: "Conflict",
    421: "Misdirected Request", 429: "Too Many Requests",
    500: "Internal Server Error", 502: "Bad Gateway",
    503: "Service Unavailable", 504: "Gateway Timeout",
}

HTML_PAGE = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n"
    "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)


class ControlError(Exception):
    """Bad control input: answered with the given status and {"error": msg}."""

    def __init__(self, msg, status=400):
        super().__init__(msg)
        self.status = status


# --------------------------------------------------------------------------
# State model
# --------------------------------------------------------------------------

class Bucket:
    """One bucket (shard) of a table: WAL positions, memtables, L0, latch."""

    def __init__(self, shard_id, indexes):
        self.shard_id = shard_id
        self.status = "Active"
        self.writer_epoch = 1
        self.manifest_version = 1
        self.current_generation = 1
        self.replay_after = 0
        self.wal_last = 0
        self.l0 = []  # [{"generation", "bytes", "rows"}] oldest first
        self.indexes = list(indexes)
        self.memtables = [self._new_memtable(1)]
        self.latched = False   # a pass owns the bucket
        self.pinned = False    # latch pinned by the control API
        self.stale = 0         # oldest L0 merged but still listed
        self.pass_token = 0    # bumped to abandon in-flight passes

    def _new_memtable(self, gen):
        return {"generation": gen, "rows": 0, "bytes": 0, "batches": 0,
                "indexes": list(self.indexes)}

    @property
    def compacting(self):
        return self.latched or self.pinned

    @property
    def sealed(self):
        """Sealed in any spelling ("Sealed", lance's "SEALED"): a drop in
        flight, no memtables, no writes; its L0 is compacted like any."""
        return self.status.lower() == "sealed"

    def active(self):
        return self.memtables[-1]

    def append(self, rows):
        """Append one batch of rows to the active memtable (one WAL entry)."""
        m = self.active()
        m["rows"] += rows
        m["bytes"] += rows * BYTES_PER_ROW
        m["batches"] += 1
        self.wal_last += 1

    def seal(self):
        """Seal the active memtable into L0; no-op when it is empty."""
        m = self.active()
        if m["rows"] == 0:
            return False
        self.l0.append({"generation": m["generation"], "bytes": m["bytes"],
                        "rows": m["rows"]})
        self.current_generation += 1
        self.memtables = self.memtables[:-1] + [
            self._new_memtable(self.current_generation)]
        # Older unsealed memtables (none in this model) would precede it.
        self.memtables = [x for x in self.memtables if x["rows"] > 0 or
                          x["generation"] == self.current_generation]
        self.replay_after = self.wal_last
        self.manifest_version += 1
        return True

    def stats(self, include_rows, keys="generations"):
        d = collections.OrderedDict()
        d["shard_id"] = self.shard_id
        d["status"] = self.status
        d["writer_epoch"] = self.writer_epoch
        d["manifest_version"] = self.manifest_version
        d["current_generation"] = self.current_generation
        d["replay_after_wal_entry_position"] = self.replay_after
        d["wal_entry_position_last_seen"] = self.wal_last
        gens = []
        for g in self.l0:
            e = collections.OrderedDict()
            e["generation"] = g["generation"]
            e["bytes"] = g["bytes"]
            if include_rows:
                e["rows"] = g["rows"]
            gens.append(e)
        d[STATS_KEYS[keys][1]] = gens
        d["compacting"] = self.compacting
        if not self.sealed:
            d["memtables"] = [collections.OrderedDict(
                (k, (list(m[k]) if k == "indexes" else m[k]))
                for k in ("generation", "rows", "bytes", "batches", "indexes"))
                for m in self.memtables]
        return d

    def state(self):
        d = self.stats(True)
        d["memtables"] = [dict(m) for m in self.memtables]
        d["latched"] = self.latched
        d["pinned"] = self.pinned
        return d


class Table:
    """One emulated table: buckets, LSM flag, claim, writer settings."""

    def __init__(self, name, buckets, rows_per_second=0, lsm=True,
                 indexes=("vec_idx",), primary_key="id", shard_ids=None):
        self.name = name
        self.lsm = bool(lsm)
        self.indexes = list(indexes)
        self.primary_key = primary_key  # unenforced primary key; None: none
        self.spec = None   # the installed write spec (what get answers)
        # shard_ids: the buckets' names (any text, sent as raw UTF-8)
        # instead of b0..b{N-1}
        names = list(shard_ids) if shard_ids else \
            ["b%d" % i for i in range(buckets)]
        self.buckets = [Bucket(n, self.indexes) for n in names]
        if self.lsm:
            self.spec = self.default_spec(buckets)
        self.claimed = True
        self.replaying = False
        # restored after a crash: only a flush claims it (StateFile)
        self.flush_claims_only = False
        self.dropping = False
        self.rows_per_second = float(rows_per_second)
        self.paused = False
        self.alive = True
        self.rr = 0
        self.pass_script = collections.deque()  # durations (ms) of the
        # next passes dispatched on the table, in order; then pass_ms
        self.writer_carry = 0.0     # rows due but not yet written
        self.writer_last = time.monotonic()
        self.passes_completed = 0
        self.passes_dispatched = 0
        self.version = 1   # rises on every state change (Emulator.changed)
        # what a lagging read replica has seen: snapshots, oldest first,
        # each {"time", "version", "lsm", "spec", "buckets"}; and the
        # snapshot a freshness header made it load (None: never)
        self.history = collections.deque()
        self.refreshed = None

    def default_spec(self, buckets):
        """The spec a table created with the LSM path on is taken to have:
        bucket sharding on its primary key, every index maintained."""
        return {"sharding": {"mode": "bucket",
                             "column": self.primary_key or "id",
                             "num_buckets": buckets},
                "maintained_indexes": list(self.indexes),
                "writer_config_defaults": {}}

    def install_spec(self, spec):
        """Install a validated spec: the LSM path on, with its shards (N
        buckets, one for unsharded, none yet for identity: a shard per
        value written)."""
        self.spec = spec
        self.lsm = True
        mode = spec["sharding"]["mode"]
        n = spec["sharding"]["num_buckets"] if mode == "bucket" else \
            (1 if mode == "unsharded" else 0)
        idx = spec["maintained_indexes"]
        self.buckets = [Bucket("b%d" % i, idx) for i in range(n)]

    def remove_spec(self):
        """The LSM path off: no spec, no shards."""
        for b in self.buckets:
            b.pass_token += 1
        self.spec = None
        self.lsm = False
        self.buckets = []

    def identity_bucket(self, value):
        """The shard of an identity-sharded table for a value, created on
        its first write."""
        sid = "%s=%s" % (self.spec["sharding"]["column"], value)
        for b in self.buckets:
            if b.shard_id == sid:
                return b
        b = Bucket(sid, self.spec["maintained_indexes"])
        self.buckets.append(b)
        return b

    def bucket(self, shard_id):
        for b in self.buckets:
            if b.shard_id == shard_id:
                return b
        raise ControlError("no bucket %r in table %r" % (shard_id, self.name))

    def state(self):
        return {
            "name": self.name, "lsm": self.lsm, "claimed": self.claimed,
            "replaying": self.replaying, "dropping": self.dropping,
            "indexes": list(self.indexes), "primary_key": self.primary_key,
            "spec": json.loads(json.dumps(self.spec)),
            "rows_per_second": self.rows_per_second, "paused": self.paused,
            "passes_completed": self.passes_completed,
            "passes_dispatched": self.passes_dispatched,
            "pass_script": list(self.pass_script),
            "version": self.version,
            "buckets": [b.state() for b in self.buckets],
        }


class Pool:
    """Compactor pool shared by all tables: a resizable, saturable set of
    permits and a FIFO queue of the passes waiting for one.  A pass gets a
    thread only once it holds a permit: with 1,000 passes queued for 50
    permits, 950 threads waking to look for a permit cost more than serving
    the routes."""

    def __init__(self, size):
        self.size = size
        self.in_use = 0
        self.saturated = False
        self.queue = collections.deque()   # (run, abandoned) waiting
        self.lock = threading.Lock()

    def submit(self, run, abandoned):
        """Run run() in a thread of its own once a permit is free, unless
        abandoned() is true by then."""
        with self.lock:
            self.queue.append((run, abandoned))
            self._start_locked()

    def _start_locked(self):
        while (not self.saturated and self.in_use < self.size
               and self.queue):
            run, abandoned = self.queue.popleft()
            if abandoned():
                continue
            self.in_use += 1
            threading.Thread(target=self._run, args=(run,),
                             daemon=True).start()

    def _run(self, run):
        try:
            run()
        finally:
            with self.lock:
                self.in_use -= 1
                self._start_locked()

    def configure(self, size=None, saturated=None):
        with self.lock:
            if size is not None:
                self.size = size
            if saturated is not None:
                self.saturated = saturated
            self._start_locked()

    def state(self):
        with self.lock:
            waiting = sum(1 for _, abandoned in self.queue if not abandoned())
            return {"size": self.size, "in_use": self.in_use,
                    "waiting": waiting, "saturated": self.saturated}


class Emulator:
    """All emulator state plus the HTTP server."""

    def __init__(self, api_key, tables=(), pass_ms=300, prefix_max=1, pool=2,
                 replay_ms=200, seal_rows=1000, host="127.0.0.1", port=0,
                 quiet=False, ssl_context=None, stats_keys="generations",
                 rtt_ms=0):
        self.api_key = api_key
        self.ssl_context = ssl_context
        self.handlers = set()   # open client connections (Handler objects)
        self.initial = {"tables": list(tables), "pass_ms": pass_ms,
                        "prefix_max": prefix_max, "pool": pool,
                        "replay_ms": replay_ms, "seal_rows": seal_rows,
                        "stats_keys": stats_keys, "rtt_ms": rtt_ms}
        self.lock = threading.RLock()
        self.host, self.port = host, port
        self.quiet = quiet
        self.stopping = threading.Event()
        self.server = None
        self.state_file = None   # StateFile with --state-file
        self.tables = {}
        self.writer = None      # the writers' thread, once a table exists
        self.writing = []       # the tables with a writer (rows_per_second > 0)
        self.writing_stale = True   # tables or their rates changed since
        self._reset_locked()

    # ---- setup / reset ---------------------------------------------------

    def _reset_locked(self):
        with self.lock:
            for t in self.tables.values():
                t.alive = False
            self.tables = {}
            self.writing_stale = True
            self.pass_ms = self.initial["pass_ms"]
            self.prefix_max = self.initial["prefix_max"]
            self.replay_ms = self.initial["replay_ms"]
            self.seal_rows = self.initial["seal_rows"]
            self.stats_keys = self.initial["stats_keys"]
            self.rtt_ms = self.initial["rtt_ms"]
            self.pool = Pool(self.initial["pool"])
            self.draining = False
            self.draining_until = None   # monotonic end of a timed drain
            self.keep_compacted = False
            self.stale_reads = 0   # stats reads left before a stale drain
            self.idle_compact_status = 429
            self.lag_ms = 0            # every table's read replica lag
            self.table_lag = {}        # per table, over lag_ms
            self.no_version_header = set()   # routes answered without it
            self.ahead_status = 0      # refuse a read ahead of the table
            self.refreshes = 0         # replica loads a header forced
            self.faults = {}
            self.latency = {}
            self.log = collections.deque(maxlen=LOG_MAX)
            self.pass_log = collections.deque(maxlen=LOG_MAX)
            self.tally = {}
            self.seq = 0
            self.conn_counter = 0
            self.writer_clock = "real"   # "manual": writers advance by
            # POST /_emulator/advance only
            for name, buckets, rps in self.initial["tables"]:
                self.create_table(name, buckets, rps)

    def reset(self):
        self._reset_locked()

    def create_table(self, name, buckets, rows_per_second=0, lsm=True,
                     indexes=("vec_idx",), primary_key="id", shard_ids=None):
        with self.lock:
            old = self.tables.get(name)
            if old is not None:
                old.alive = False
            t = Table(name, buckets, rows_per_second, lsm, indexes,
                      primary_key, shard_ids)
            self.tables[name] = t
            if self.lag_for(t) > 0:
                self.remember(t)
            self.writing_stale = True
            self.ensure_writer()
        return t

    def ensure_writer(self):
        """Start the writers' thread (one for every table) unless it runs.
        The caller holds self.lock."""
        if self.writer is None:
            self.writer = threading.Thread(target=self._writer_loop,
                                           name="writer", daemon=True)
            self.writer.start()

    def table(self, name):
        t = self.tables.get(name)
        if t is None:
            raise ControlError("no table %r" % name, 404)
        return t

    def next_conn(self):
        with self.lock:
            self.conn_counter += 1
            return self.conn_counter

    # ---- writes ----------------------------------------------------------

    def _append(self, t, b, rows):
        b.append(rows)
        if b.active()["rows"] >= self.seal_rows:
            b.seal()
        self.changed(t)

    def write(self, t, rows, bucket=None):
        """Append rows: one batch to `bucket`, or spread round-robin."""
        with self.lock:
            if bucket is not None:
                b = t.bucket(bucket)
                if rows > 0:
                    self._append(t, b, rows)
                return
            live = [b for b in t.buckets if not b.sealed]
            if not live or rows <= 0:
                return
            per = collections.OrderedDict()
            for _ in range(rows):
                b = live[t.rr % len(live)]
                t.rr += 1
                per[b.shard_id] = per.get(b.shard_id, 0) + 1
            for sid, n in per.items():
                self._append(t, t.bucket(sid), n)

    def _writer_loop(self):
        """One thread writes for every table at its rows_per_second, every
        50 ms (a thread per table would wake 20,000 times a second with
        1,000 tables, most of them idle).  Only the tables with a writer
        are visited: 100,000 idle tables must not hold the lock for
        milliseconds every tick."""
        while not self.stopping.wait(0.05):
            now = time.monotonic()
            with self.lock:
                for t in self._writers():
                    dt, t.writer_last = now - t.writer_last, now
                    if self.writer_clock == "real":
                        self._writer_tick(t, dt)

    def _writers(self):
        """The tables with a writer; caller holds lock."""
        if self.writing_stale:
            self.writing = [t for t in self.tables.values()
                            if t.rows_per_second > 0]
            self.writing_stale = False
        return self.writing

    def advance(self, seconds, tick_s=0.05):
        """The writers' clock moved on by SECONDS: every writer writes what
        it would have in that time, one tick of TICK_S seconds after the
        other (a batch per bucket each, as the writers' thread every 50 ms),
        so that memtables seal at --seal-rows as they would have."""
        with self.lock:
            ticks = int(round(seconds / tick_s))
            for t in self._writers():
                for _ in range(ticks):
                    self._writer_tick(t, tick_s)

    def _writer_tick(self, t, dt):
        """Write the rows t is due for DT more seconds; caller holds lock."""
        if (t.paused or t.rows_per_second <= 0 or not t.lsm or not t.claimed
                or t.replaying or t.dropping):
            t.writer_carry = 0.0
            return
        t.writer_carry += t.rows_per_second * dt
        n = int(t.writer_carry)
        t.writer_carry -= n
        if n > 0:
            self.write(t, n)

    # ---- route actions ---------------------------------------------------

    def flush(self, t):
        with self.lock:
            sealed = False
            for b in t.buckets:
                if not b.sealed:
                    sealed = b.seal() or sealed
            if sealed:
                self.changed(t)

    def compact(self, t, pass_ms=None):
        """Latch and dispatch; returns the number of buckets latched."""
        started = []
        with self.lock:
            for b in t.buckets:
                # any status: the SDK's checkpoint targets Sealed buckets too
                if b.l0 and not b.compacting:
                    b.latched = True
                    ms = pass_ms
                    if ms is None and t.pass_script:
                        ms = t.pass_script.popleft()
                    started.append((b, b.pass_token, ms))
                    t.passes_dispatched += 1
            if started:
                self.changed(t)
            pool = self.pool
        for b, token, ms in started:
            self._pass(t, b, token, pool, ms)
        return len(started)

    def _pass(self, t, b, token, pool, pass_ms=None):
        """Queue a pass on bucket b for a permit of pool; once it has one,
        it takes pass_ms (default self.pass_ms) and drains a prefix of
        L0, unless abandoned (table gone, latch reset, emulator stopping)."""
        def abandoned():
            return (not t.alive or b.pass_token != token
                    or self.stopping.is_set())

        queued = time.time()

        def run():
            ms = self.pass_ms if pass_ms is None else pass_ms
            started = time.time()
            deadline = time.monotonic() + ms / 1000.0
            while True:
                left = deadline - time.monotonic()
                if left <= 0 and not b.pinned:
                    break
                if abandoned():
                    return
                time.sleep(min(left, 0.05) if left > 0 else 0.01)
            with self.lock:
                if abandoned():
                    return
                n = max(0, int(self.prefix_max))
                if self.keep_compacted:
                    n = 0   # merged, but the generations stay listed
                elif self.stale_reads > 0 and n:
                    # merged, listed until stale_reads more stats reads
                    b.stale = min(len(b.l0), b.stale + n)
                    n = 0
                if n and b.l0:
                    del b.l0[:n]
                    b.manifest_version += 1
                t.passes_completed += 1
                b.latched = False
                self.changed(t)
                self.pass_log.append({"table": t.name, "shard_id": b.shard_id,
                                      "queued": queued, "started": started,
                                      "ended": time.time()})

        pool.submit(run, abandoned)

    def count_stale_read(self):
        """Under the lock: a stats read was answered; the one that uses up
        stale_reads drops the generations every bucket kept listed."""
        if self.stale_reads <= 0:
            return
        self.stale_reads -= 1
        if self.stale_reads:
            return
        for t in self.tables.values():
            for b in t.buckets:
                if b.stale:
                    del b.l0[:b.stale]
                    b.stale = 0
                    b.manifest_version += 1
                    self.changed(t)

    def restart_node(self):
        with self.lock:
            for t in self.tables.values():
                t.claimed = False
                t.replaying = False
                for b in t.buckets:
                    b.pass_token += 1
                    b.latched = False
                    b.pinned = False
            old = self.pool
            self.pool = Pool(old.size)
            self.pool.saturated = old.saturated
            self.draining, self.draining_until = False, None

    # ---- versions and lagging read replicas -----------------------------

    def lag_for(self, t):
        """The read replica lag of table t, in ms (0: reads see the
        primary).  The caller holds self.lock."""
        return self.table_lag.get(t.name, self.lag_ms)

    def snapshot(self, t):
        """What a replica loading table t now would hold."""
        return {"time": time.time(), "version": t.version, "lsm": t.lsm,
                "spec": json.loads(json.dumps(t.spec)),
                "buckets": [b.stats(True) for b in t.buckets]}

    def remember(self, t):
        """Keep t's state for its lagging replica, and forget what no
        replica can serve any more.  The caller holds self.lock."""
        snap = self.snapshot(t)
        h = t.history
        h.append(snap)
        cutoff = snap["time"] - self.lag_for(t) / 1000.0
        while len(h) > 1 and h[1]["time"] <= cutoff:
            h.popleft()

    def changed(self, t):
        """Table t's state changed: a new version.  The caller holds
        self.lock."""
        t.version += 1
        if self.lag_for(t) > 0:
            self.remember(t)

    def set_lag(self, ms, table=None):
        """The replica lag of one table (None: every table without one of
        its own); each affected table starts its history from now, the
        others keep theirs."""
        with self.lock:
            if table is None:
                self.lag_ms = ms
            elif ms is None:
                self.table_lag.pop(table, None)
            else:
                self.table_lag[table] = ms
            for t in self.tables.values():
                if table is not None and t.name != table:
                    continue
                if table is None and t.name in self.table_lag:
                    continue
                t.history.clear()
                t.refreshed = None
                if self.lag_for(t) > 0:
                    self.remember(t)

    def replica_view(self, t, min_version, min_time):
        """Under self.lock: the snapshot a read of t is served from, or
        None when t has no lag (the primary answers).  The replica holds
        the state of lag ms ago, or the newer one a header made it load;
        it loads the primary's state first when min_version is above its
        version or min_time (unix seconds) after the moment it reflects,
        as a query node whose cache is behind does (the SDK's
        freshness.rs)."""
        lag = self.lag_for(t)
        if lag <= 0:
            return None
        now = time.time()
        cutoff = now - lag / 1000.0
        view, as_of = t.history[0], cutoff
        for snap in t.history:
            if snap["time"] <= cutoff:
                view = snap
        if t.refreshed is not None and t.refreshed["version"] > view["version"]:
            view, as_of = t.refreshed, t.refreshed["time"]
        if (min_version is not None and min_version > view["version"]) or \
                (min_time is not None and min_time > as_of):
            t.refreshed = view = self.snapshot(t)
            self.refreshes += 1
        return view

    def freshness_state(self):
        with self.lock:
            return {"ok": True, "lag_ms": self.lag_ms,
                    "tables": dict(self.table_lag),
                    "no_version_header": sorted(self.no_version_header),
                    "ahead_status": self.ahead_status,
                    "refreshes": self.refreshes}

    # ---- faults and latency ---------------------------------------------

    def _lookup_keys(self, table, route):
        return [(table, route), (table, "*"), ("*", route), ("*", "*")]

    def take_fault(self, table, route):
        with self.lock:
            now = time.monotonic()
            for key in self._lookup_keys(table or "", route or ""):
                q = self.faults.get(key)
                # a fault whose "for_ms" ran out is gone, whatever its count
                while q and q[0].get("until") is not None and now >= q[0]["until"]:
                    q.popleft()
                if q:
                    f = q[0]
                    if f.get("for_ms") and f.get("until") is None:
                        # its clock starts with the first request it answers
                        f["until"] = now + f["for_ms"] / 1000.0
                    if f["count"] > 0:
                        f["count"] -= 1
                        if f["count"] == 0:
                            q.popleft()
                    return f
            return None

    def latency_ms(self, table, route):
        with self.lock:
            for key in self._lookup_keys(table or "", route or ""):
                if key in self.latency:
                    return self.latency[key]
            return 0

    # ---- log -------------------------------------------------------------

    def log_entry(self, entry):
        """Append a route request to the log and to the per-table tally."""
        with self.lock:
            self.seq += 1
            entry["seq"] = self.seq
            self.log.append(entry)
            t = self.tally.setdefault(entry["table"], {
                "routes": dict.fromkeys(ALL_ROUTES, 0), "total": 0, "conns": set()})
            if entry["route"] in t["routes"]:
                t["routes"][entry["route"]] += 1
            t["total"] += 1
            t["conns"].add(entry["conn"])

    def reset_log(self):
        with self.lock:
            self.log = collections.deque(maxlen=LOG_MAX)
            self.pass_log = collections.deque(maxlen=LOG_MAX)
            self.tally = {}

    def counts(self, table=None):
        """Calls per route since the last log reset (all tables or one)."""
        with self.lock:
            c = dict.fromkeys(ALL_ROUTES, 0)
            total = 0
            conns = set()
            for name, t in self.tally.items():
                if table is not None and name != table:
                    continue
                for r in ALL_ROUTES:
                    c[r] += t["routes"][r]
                total += t["total"]
                conns |= t["conns"]
            for r in SPEC_ROUTES:
                if c[r] == 0:
                    del c[r]
            c["total"] = total
            c["connections"] = len(conns)
            return c

    def table_counts(self):
        """Calls per route of every table called since the last log
        reset, exact however many (the log keeps the newest LOG_MAX)."""
        with self.lock:
            return {name: {r: n for r, n in t["routes"].items()
                           if n or r in ROUTES}
                    for name, t in self.tally.items() if name is not None}

    # ---- server ----------------------------------------------------------

    def start(self):
        """Bind and serve in a background thread; return the bound port."""
        self.server = make_server(self.host, self.port, self.ssl_context)
        self.server.emu = self
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self.port

    def close_idle(self, caller=None, settle_s=0.5):
        """Close (FIN) every client connection waiting between requests,
        as a server's keep-alive timeout does; returns how many.

        A handler marks itself idle only after its last byte is sent, so a
        client can read a whole answer and ask for this close before its
        handler says so.  Other connections get up to settle_s seconds to
        go idle first; caller (the control request's own handler) is never
        closed.  A connection already ended (closed by its client, or by an
        earlier close_idle) whose handler has not yet read the end of its
        stream is not counted."""
        deadline = time.monotonic() + settle_s
        while True:
            with self.lock:
                others = [h for h in self.handlers if h is not caller]
            if time.monotonic() >= deadline or not any(h.busy for h in others):
                break
            time.sleep(0.005)
        idle = [h for h in others if not h.busy and not _stream_ended(h)]
        for h in idle:
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return len(idle)

    def stop(self):
        self.stopping.set()
        with self.lock:
            for t in self.tables.values():
                t.alive = False
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _stream_ended(handler):
    """Whether a connection's stream has ended (the client closed it, or
    this side shut it down) while its handler has not read that yet:
    a peek that does not wait and reads nothing.  Over TLS it cannot be
    told without reading: False."""
    try:
        return handler.connection.recv(
            1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError, ValueError):
        return False
    except OSError:
        return True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True
    ssl_context = None
    dual_stack = False

    def server_bind(self):
        if self.dual_stack:
            # "::" also accepts IPv4 (as ::ffff:a.b.c.d)
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

    def finish_request(self, request, client_address):
        """With TLS, the handshake runs here, in the connection's own
        thread: a client that does not speak TLS (or refuses our
        certificate) costs only its own connection."""
        if self.ssl_context is not None:
            try:
                request.settimeout(10)
                request = self.ssl_context.wrap_socket(request,
                                                       server_side=True)
                request.settimeout(None)
            except (OSError, ssl.SSLError):
                try:
                    request.close()
                except OSError:
                    pass
                return
            try:
                super().finish_request(request, client_address)
            finally:
                # the original socket was detached into the TLS one:
                # shutdown_request() cannot close it for us
                try:
                    request.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                request.close()
            return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        """Stay quiet about clients that went away; report anything else."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class Server6(Server):
    address_family = socket.AF_INET6


def make_server(host, port, ssl_context=None):
    """A Server bound to host:port: IPv6 when host has a ':' ("::" is
    dual-stack), with TLS when ssl_context is given."""
    cls = Server6 if ":" in host else Server
    cls = type(cls.__name__, (cls,), {"ssl_context": ssl_context,
                                      "dual_stack": host == "::"})
    return cls((host, port), Handler)


def make_ssl_context(cert, key, client_ca=None):
    """The server's TLS context; with client_ca, a client certificate
    signed by it is required."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if client_ca:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(client_ca)
    return ctx


# --------------------------------------------------------------------------
# JSON mutation helpers
# --------------------------------------------------------------------------

def render_bucket(d, include_rows, keys):
    """A bucket's stats as remembered (Bucket.stats(True)) in the answer's
    spelling, with generation rows only when asked for."""
    out = collections.OrderedDict()
    for k, v in d.items():
        if k == "generations":
            k = STATS_KEYS[keys][1]
            v = [collections.OrderedDict(
                (gk, gv) for gk, gv in g.items()
                if include_rows or gk != "rows") for g in v]
        out[k] = v
    return out


def _split_path(path):
    return [int(p) if p.isdigit() else p for p in path.split(".") if p != ""]


def _resolve_parent(obj, parts):
    cur = obj
    for p in parts[:-1]:
        cur = cur[p]
    return cur


def _ser(v, dup=None, here=()):
    """Serialize JSON keeping key order; emit key `dup` (a path tuple) twice.
    Non-ASCII text is written as raw UTF-8 (the caller encodes the str)."""
    if isinstance(v, dict):
        items = []
        for k, x in v.items():
            s = json.dumps(str(k), ensure_ascii=False) + ": " + \
                _ser(x, dup, here + (k,))
            items.append(s)
            if dup is not None and here + (k,) == dup:
                items.append(s)
        return "{" + ", ".join(items) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_ser(x, dup, here + (i,))
                               for i, x in enumerate(v)) + "]"
    # raw UTF-8, as a Rust (serde_json) server writes it; not \u escapes
    return json.dumps(v, ensure_ascii=False)


def _add_extra(v):
    if isinstance(v, dict):
        for x in list(v.values()):
            _add_extra(x)
        v["x_emulator_extra"] = {"note": "unknown field", "n": [1, 2]}
    elif isinstance(v, list):
        for x in v:
            _add_extra(x)


def mutate(body_obj, raw, spec):
    """Return (bytes, content_type) for the real answer mutated by spec."""
    kind, _, arg = spec.partition(":")
    if kind == "not_json":
        return b"this is not json {", "application/json"
    if kind == "html":
        return HTML_PAGE.encode(), "text/html"
    if kind == "truncate":
        return raw[: len(raw) // 2], "application/json"
    if body_obj is None:
        return raw, "application/json"
    obj = json.loads(json.dumps(body_obj))  # deep copy, order kept
    dup = None
    try:
        if kind == "extra":
            _add_extra(obj)
        elif kind == "nest":
            # built as text: a recursive serializer overflows Python's stack
            n = int(arg or 1)
            return ("[" * n + _ser(obj) + "]" * n).encode(), "application/json"
        elif kind in ("missing", "mistype", "negative", "huge", "duplicate",
                      "null"):
            parts = _split_path(arg)
            parent = _resolve_parent(obj, parts)
            key = parts[-1]
            if kind == "missing":
                del parent[key]
            elif kind == "mistype":
                parent[key] = 1 if isinstance(parent[key], str) else "x"
            elif kind == "negative":
                old = parent[key]
                parent[key] = -old if isinstance(old, (int, float)) and old > 0 else -1
            elif kind == "huge":
                parent[key] = HUGE
            elif kind == "null":
                parent[key]  # must exist
                parent[key] = None
            elif kind == "duplicate":
                parent[key]  # must exist
                dup = tuple(parts)
        else:
            raise ControlError("unrecognized mutate %r" % spec)
    except (KeyError, IndexError, TypeError):
        pass  # the path is not in this answer: send it unchanged
    return _ser(obj, dup).encode(), "application/json"


def parse_write_spec(body):
    """The set_lsm_write_spec request body as a spec dict, checked the way
    the wire format allows; raises ValueError with the server's message.
    maintained_indexes stays None ("every index") for the table to resolve."""
    try:
        req = json.loads(body)
    except ValueError:
        raise ValueError("request body is not valid JSON")
    if not isinstance(req, dict):
        raise ValueError("request body must be a JSON object")
    sh = req.get("sharding")
    if not isinstance(sh, dict):
        raise ValueError("sharding must be an object")
    mode = sh.get("mode")
    keys = {"bucket": {"mode", "column", "num_buckets"},
            "identity": {"mode", "column"}, "unsharded": {"mode"}}
    if mode not in keys:
        raise ValueError("unrecognized sharding mode %r" % (mode,))
    if set(sh) != keys[mode]:
        raise ValueError("sharding mode %s takes exactly the fields %s" %
                         (mode, ", ".join(sorted(keys[mode]))))
    if "column" in sh and (not isinstance(sh["column"], str) or not sh["column"]):
        raise ValueError("sharding column must be a non-empty string")
    if mode == "bucket":
        n = sh["num_buckets"]
        if isinstance(n, bool) or not isinstance(n, int) or \
                not 1 <= n <= MAX_SPEC_BUCKETS:
            raise ValueError("num_buckets must be an integer from 1 to %d"
                             % MAX_SPEC_BUCKETS)
    idx = req.get("maintained_indexes", "absent")
    if idx is not None and (not isinstance(idx, list) or
                            not all(isinstance(i, str) and i for i in idx)):
        raise ValueError("maintained_indexes must be null or a list of index names")
    if idx is not None and len(set(idx)) != len(idx):
        raise ValueError("maintained_indexes names an index twice")
    wcd = req.get("writer_config_defaults")
    if not isinstance(wcd, dict) or \
            not all(isinstance(v, str) for v in wcd.values()):
        raise ValueError("writer_config_defaults must be an object of strings")
    return {"sharding": dict(sh), "maintained_indexes": idx,
            "writer_config_defaults": dict(wcd)}


def padded_json(obj, n):
    """The JSON object obj with a last member "pad", an array of zeros,
    making the document exactly n bytes (just obj when n is too small):
    many tiny values, the costliest kind of document to parse."""
    head = _ser(obj)[:-1] + (", " if obj else "") + '"pad": ['
    room = n - len(head) - 2
    if room < 1:
        return _ser(obj).encode()
    zeros = (room + 1) // 2
    return (head + ",".join(["0"] * zeros) + " " * (room - (2 * zeros - 1))
            + "]}").encode()


def oversized_body(n):
    """A body of exactly n bytes: valid JSON when n is large enough."""
    head, tail = '{"lsm_stats": {"buckets": []}, "pad": "', '"}'
    if n < len(head) + len(tail):
        return (head + tail).encode()[:max(n, 0)]
    return (head + "a" * (n - len(head) - len(tail)) + tail).encode()


# --------------------------------------------------------------------------
# HTTP handler
# --------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "lsm-emulator/1.0"
    sys_version = ""

    def setup(self):
        super().setup()
        self.emu = self.server.emu
        self.conn_id = self.emu.next_conn()
        self.busy = False
        with self.emu.lock:
            self.emu.handlers.add(self)

    def finish(self):
        with self.emu.lock:
            self.emu.handlers.discard(self)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, fmt, *args):  # silence the default access log
        pass

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def do_PATCH(self):
        self._dispatch("PATCH")

    # ---- I/O helpers -----------------------------------------------------

    def _read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            out = b""
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline(65537)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _head(self, status, headers, raw_lines=(), reason=None):
        lines = ["HTTP/1.1 %d %s" % (status, reason or REASONS.get(status, "Status"))]
        lines.append("Server: lsm-emulator/1.0")
        rid = self.headers.get("x-request-id") if self.headers else None
        if rid:
            lines.append("x-request-id: " + rid)
        for k, v in headers:
            lines.append("%s: %s" % (k, v))
        lines.extend(raw_lines)
        if self.close_connection:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")

    def _send(self, status, body=b"", ctype=None, headers=(), raw_lines=(),
              chunked=False):
        hdrs = []
        if ctype and body:
            hdrs.append(("Content-Type", ctype))
        hdrs.extend(headers)
        if chunked:
            hdrs.append(("Transfer-Encoding", "chunked"))
            out = self._head(status, hdrs, raw_lines)
            half = len(body) // 2
            for part in (body[:half], body[half:]):
                if part:
                    out += b"%x\r\n" % len(part) + part + b"\r\n"
            out += b"0\r\n\r\n"
        else:
            hdrs.append(("Content-Length", str(len(body))))
            out = self._head(status, hdrs, raw_lines) + body
        self._mark(status)
        self._resp = body
        self.wfile.write(out)
        self.wfile.flush()

    def _mark(self, status):
        """Record the status being sent (visible in the log at once)."""
        self._status = status
        if getattr(self, "_entry", None) is not None:
            self._entry["status"] = status
            # before the first byte goes out: a request whose [time,
            # answered] overlaps another's was in the client's hands too
            self._entry["answered"] = time.time()

    def _send_json(self, status, obj):
        self._send(status, _ser(obj).encode(), "application/json")

    def _client_gone(self, timeout):
        """Wait up to timeout; True when the peer closed the connection.
        Reads and drops what the peer sends meanwhile: call it only while
        the peer still waits for this answer, never after its last byte
        (a kept-alive client may send its next request then)."""
        try:
            r, _, _ = select.select([self.connection], [], [], timeout)
            if r:
                data = self.connection.recv(65536)
                return data == b""
        except OSError:
            return True
        return False

    def _sleep_ms(self, ms):
        end = time.monotonic() + ms / 1000.0
        while not self.emu.stopping.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.05))

    # ---- dispatch --------------------------------------------------------

    def _dispatch(self, method):
        self.busy = True
        try:
            self._dispatch_inner(method)
        finally:
            self.busy = False

    def _dispatch_inner(self, method):
        raw_path = self.path
        path, _, query = raw_path.partition("?")
        self._status = 0
        self._resp = b""
        self._entry = None
        self._answer_version = None
        if path.startswith("/_emulator/") or path == "/_emulator":
            body = self._read_body()
            try:
                status, obj = Control(self.emu, self).handle(method, path, query, body)
            except ControlError as e:
                status, obj = e.status, {"error": str(e)}
            except (ValueError, TypeError, KeyError, AttributeError) as e:
                status, obj = 400, {"error": "bad control input: %s" % e}
            self._send_json(status, obj)
            return
        self._route_request(method, raw_path, path, query)

    def _route_request(self, method, raw_path, path, query):
        emu = self.emu
        t0 = time.time()
        segs = path.split("/")
        table = route = None
        # /v1/table/{id}/{route}/  -> ['', 'v1', 'table', id, route, '']
        if len(segs) >= 5 and segs[1] == "v1" and segs[2] == "table":
            table = urllib.parse.unquote(segs[3])
            route = segs[4] if len(segs) <= 6 and (len(segs) == 5 or segs[5] == "") else None
            if route not in ALL_ROUTES and route is not None:
                other_route = route
                route = None
            else:
                other_route = None
        else:
            other_route = None
        body = self._read_body()
        hdrs = {}
        for k, v in self.headers.items():
            k = k.lower()
            hdrs[k] = "***" if k == "x-api-key" else v
        entry = {"time": t0, "conn": self.conn_id, "table": table,
                 "route": route, "method": method, "path": raw_path,
                 "query": query, "headers": hdrs,
                 "body": body.decode("utf-8", "replace"), "status": 0,
                 "answered": None, "version": None}
        emu.log_entry(entry)
        self._entry = entry
        try:
            # the network's round trip: this connection's thread waits,
            # every other connection is served meanwhile
            if emu.rtt_ms:
                self._sleep_ms(emu.rtt_ms)
            self._route_inner(method, table, route, other_route, query, body)
        except OSError:
            self.close_connection = True  # the client went away
        except Exception as e:  # an emulator bug: answer 500, keep serving
            self.close_connection = True
            if self._status == 0:
                try:
                    self._error(500, CODE_INTERNAL, "emulator error: %r" % e)
                except OSError:
                    pass
            raise
        finally:
            entry["status"] = self._status
            entry["response"] = self._resp[:RESPONSE_KEEP].decode("utf-8", "replace")
            entry["ms"] = round((time.time() - t0) * 1000, 1)
            if not emu.quiet:
                sys.stderr.write("%s conn=%d %s %s -> %d %.1fms\n" % (
                    time.strftime("%H:%M:%S"), self.conn_id, method, raw_path,
                    self._status, entry["ms"]))
                sys.stderr.flush()

    def _error(self, status, code, msg):
        self._send_json(status, {"code": code, "error": msg})

    def _route_inner(self, method, table, route, other_route, query, body):
        emu = self.emu
        key = self.headers.get("x-api-key")
        if key is None or key != emu.api_key:
            self._error(401, CODE_UNAUTHORIZED,
                        "missing API key" if key is None else "invalid API key")
            return
        if route is None:
            if other_route == "describe" and method == "POST":
                self._describe(table)
                return
            self._error(404, CODE_NO_ROUTE, "no route for %s %s" % (
                method, self.path))
            return
        if method != "POST":
            self._error(405, CODE_METHOD, "method %s not allowed" % method)
            return
        ms = emu.latency_ms(table, route)
        if ms:
            self._sleep_ms(ms)
        fault = emu.take_fault(table, route)
        if fault is not None and fault.get("pass"):
            fault = None
        if fault is None:
            status, obj = self._real(table, route, body)
            self._send_real(status, obj, route)
            return
        self._apply_fault(fault, table, route, body)

    def _describe(self, table):
        """Minimal describe answer so that SDK openTable() succeeds."""
        t = self.emu.tables.get(table)
        if t is None:
            self._error(404, CODE_TABLE_NOT_FOUND, "table %s not found" % table)
            return
        self._send_json(200, {
            "table": table, "version": t.version,
            "schema": {"fields": [
                {"name": "id", "type": {"type": "int64"}, "nullable": False},
                {"name": "vec", "type": {"type": "fixed_size_list", "length": 4,
                 "fields": [{"name": "item", "type": {"type": "float"},
                             "nullable": True}]}, "nullable": True}]},
            "stats": {"num_deleted_rows": 0, "num_fragments": 0}})

    def _send_real(self, status, obj, route=None):
        """Send a route's own answer; a 2xx carries x-lancedb-version (the
        version it reflects) unless that is switched off for the route."""
        headers = []
        v = self._answer_version
        if v is not None and 200 <= status < 300 and \
                not ({route, "*"} & self.emu.no_version_header):
            headers.append((VERSION_HEADER, str(v)))
            if self._entry is not None:
                self._entry["version"] = v
        if obj is None:
            self._send(status, headers=headers)
        else:
            self._send(status, _ser(obj).encode(), "application/json",
                       headers=headers)

    # ---- real route semantics -------------------------------------------

    def _real(self, name, route, body):
        """Perform the route; return (status, json_obj_or_None)."""
        emu = self.emu

        def err(status, code, msg):
            return status, {"code": code, "error": msg}

        if route in SPEC_ROUTES:
            return self._spec_route(name, route, body)
        include_rows = False
        if route == "get_lsm_stats" and body.strip():
            try:
                req = json.loads(body)
            except ValueError:
                return err(400, CODE_BAD_REQUEST, "request body is not valid JSON")
            if not isinstance(req, dict):
                return err(400, CODE_BAD_REQUEST, "request body must be a JSON object")
            # a server of one spelling ignores the other's key, as unknown
            rows_key = STATS_KEYS[emu.stats_keys][2]
            v = req.get(rows_key, False)
            if v is not None and not isinstance(v, bool):
                return err(400, CODE_BAD_REQUEST,
                           "%s must be a boolean" % rows_key)
            include_rows = bool(v)
        with emu.lock:
            t, refusal = self._table_or_refusal(name)
            if refusal:
                return refusal
            if t.replaying:
                return err(429, CODE_REPLAYING, "node is replaying its WAL")
            view = None
            if route == "get_lsm_stats":
                view, refusal = self._read_view(t)
                if refusal:
                    return refusal
            if not (view["lsm"] if view else t.lsm):
                if route == "get_lsm_stats":
                    return 200, {"lsm_stats": None}
                return err(400, CODE_LSM_DISABLED,
                           "table %s has no LSM write path" % name)
            replay = False
            if not t.claimed:
                if route == "compact_lsm" or (route == "get_lsm_stats" and
                                              t.flush_claims_only):
                    return err(421, CODE_CLAIM_OR_DRAIN, "table not claimed")
                t.replaying = True
                replay = True
        if replay:
            self._sleep_ms(emu.replay_ms)
            with emu.lock:
                if not t.alive:
                    return err(404, CODE_TABLE_NOT_FOUND, "table %s not found" % name)
                t.replaying = False
                t.claimed = True
                t.flush_claims_only = False
                for b in t.buckets:
                    b.writer_epoch += 1
                emu.changed(t)
        if route == "flush_lsm":
            emu.flush(t)
            self._answer_version = t.version
            return 202, None
        if route == "compact_lsm":
            if emu.compact(t) == 0:
                if emu.idle_compact_status == 202 and \
                        not any(b.compacting for b in t.buckets):
                    self._answer_version = t.version
                    return 202, None   # nothing to do, said as a success
                return err(429, CODE_CONTENTION,
                           "no bucket could be latched for compaction")
            self._answer_version = t.version
            return 202, None
        with emu.lock:
            if view is not None:
                buckets = [render_bucket(d, include_rows, emu.stats_keys)
                           for d in view["buckets"]]
            else:
                buckets = [b.stats(include_rows, emu.stats_keys)
                           for b in t.buckets]
                self._answer_version = t.version
            answer = {"lsm_stats": {STATS_KEYS[emu.stats_keys][0]: buckets}}
            emu.count_stale_read()
            return 200, answer

    def _read_view(self, t):
        """Under emu.lock: (view, None) for a read of t, view None when
        the primary answers (no lag), or (None, (status, body)) when the
        read asks for a version the table never had and the emulator is
        set to refuse it (ahead_status).  Sets the answer's version."""
        emu = self.emu
        min_version, min_time = self._freshness_headers()
        if emu.ahead_status and min_version is not None and \
                min_version > t.version:
            return None, (emu.ahead_status, {
                "code": CODE_VERSION_AHEAD,
                "error": "table %s has no version %d (latest %d)" % (
                    t.name, min_version, t.version)})
        view = emu.replica_view(t, min_version, min_time)
        self._answer_version = view["version"] if view else t.version
        if self._entry is not None:
            self._entry["refreshes"] = emu.refreshes
        return view, None

    def _freshness_headers(self):
        """The request's x-lancedb-min-read-version (an integer or None)
        and x-lancedb-min-timestamp (unix seconds or None); a value that
        does not parse is ignored, as an older server ignores both."""
        v = self.headers.get(MIN_READ_VERSION_HEADER)
        min_version = int(v) if v is not None and v.strip().isdigit() else None
        ts = self.headers.get(MIN_TIMESTAMP_HEADER)
        min_time = None
        if ts is not None:
            try:
                min_time = datetime.datetime.fromisoformat(
                    ts.strip().replace("Z", "+00:00")).timestamp()
            except ValueError:
                min_time = None
        return min_version, min_time

    def _table_or_refusal(self, name):
        """Under emu.lock: (table, None), or (None, (status, body)) for a
        draining node, an unknown table or a table being dropped."""
        emu = self.emu
        t = emu.tables.get(name)
        if emu.draining and emu.draining_until is not None and \
                time.monotonic() >= emu.draining_until:
            emu.draining, emu.draining_until = False, None
        if emu.draining:
            return None, (503, {"code": CODE_CLAIM_OR_DRAIN, "error": "node is draining"})
        if t is None:
            return None, (404, {"code": CODE_TABLE_NOT_FOUND,
                                "error": "table %s not found" % name})
        if t.dropping:
            return None, (409, {"code": CODE_TABLE_DROPPING,
                                "error": "table %s is being dropped" % name})
        return t, None

    def _spec_route(self, name, route, body):
        """set / unset / get the table's LSM write spec (control-plane
        routes: no claim needed, refused while draining or dropping)."""
        emu = self.emu

        def err(status, code, msg):
            return status, {"code": code, "error": msg}

        spec = None
        if route == "set_lsm_write_spec":
            try:
                spec = parse_write_spec(body)
            except ValueError as e:
                return err(400, CODE_BAD_REQUEST, str(e))
        with emu.lock:
            t, refusal = self._table_or_refusal(name)
            if refusal:
                return refusal
            if route == "get_lsm_write_spec":
                view, refusal = self._read_view(t)
                if refusal:
                    return refusal
                spec = view["spec"] if view else t.spec
                return 200, {"lsm_write_spec": json.loads(json.dumps(spec))}
            if route == "unset_lsm_write_spec":
                if t.spec is None:
                    return err(400, CODE_SPEC_REFUSED,
                               "table %s has no LSM write spec to unset" % name)
                t.remove_spec()
                emu.changed(t)
                self._answer_version = t.version
                return 200, None
            problem = self._spec_problem(t, spec)
            if problem:
                return err(400, CODE_SPEC_REFUSED, problem)
            if spec["maintained_indexes"] is None:
                spec["maintained_indexes"] = list(t.indexes)
            t.install_spec(spec)
            emu.changed(t)
            self._answer_version = t.version
            return 200, None

    @staticmethod
    def _spec_problem(t, spec):
        """Why the table refuses spec (the server's checks), or None."""
        if t.spec is not None:
            return "table %s already has an LSM write spec; unset it first" % t.name
        if t.primary_key is None:
            return "table %s has no unenforced primary key" % t.name
        sh = spec["sharding"]
        if sh["mode"] == "bucket" and sh["column"] != t.primary_key:
            return "bucket sharding column %s is not the primary key %s" % (
                sh["column"], t.primary_key)
        for i in spec["maintained_indexes"] or ():
            if i not in t.indexes:
                return "table %s has no index %s" % (t.name, i)
        return None

    # ---- faults ----------------------------------------------------------

    def _fault_body(self, f):
        if "pad_to" in f:
            return padded_json(f.get("json") or {}, int(f["pad_to"])), "application/json"
        if "body_bytes" in f:
            return oversized_body(int(f["body_bytes"])), "application/json"
        if "json" in f:
            return _ser(f["json"]).encode(), "application/json"
        if "body" in f:
            return str(f["body"]).encode("utf-8"), f.get("content_type", "application/json")
        return None, None

    def _apply_fault(self, f, table, route, body):
        action = f.get("action", "respond")
        extra = list((f.get("headers") or {}).items())
        raw_lines = list(f.get("raw_header_lines") or [])
        fbody, fctype = self._fault_body(f)

        def real_answer():
            status, obj = self._real(table, route, body)
            raw = b"" if obj is None else _ser(obj).encode()
            return status, obj, raw

        if action in ("hang", "close_before_headers", "reset"):
            if f.get("apply"):
                self._real(table, route, body)
            self.close_connection = True
            if action == "hang":
                # bounded: "max_ms" ends the hang by closing (default never)
                until = time.monotonic() + int(f.get("max_ms", 0)) / 1000.0 \
                    if f.get("max_ms") else None
                while not self.emu.stopping.is_set():
                    if self._client_gone(0.1):
                        break
                    if until is not None and time.monotonic() >= until:
                        break
            elif action == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
            else:
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            return

        # Actions that send a response: status/body either canned or real.
        if f.get("mutate"):
            status, obj, raw = real_answer()
            raw, ctype = mutate(obj, raw, f["mutate"])
            if "status" in f:
                status = int(f["status"])
        elif fbody is not None or "status" in f or action == "redirect":
            if f.get("apply"):
                self._real(table, route, body)
            default = 302 if action == "redirect" else 200
            status = int(f.get("status", default))
            raw, ctype = (fbody or b""), fctype
        else:
            status, obj, raw = real_answer()
            ctype = "application/json" if raw else None

        if action == "redirect":
            extra.append(("Location", f.get("location", "http://127.0.0.1:1/")))
            self._send(status, raw, ctype, extra, raw_lines)
            return
        if action == "respond":
            self._send(status, raw, ctype, extra, raw_lines,
                       chunked=bool(f.get("chunked")))
            return
        hdrs = ([("Content-Type", ctype)] if ctype else []) + extra
        if action == "close_mid_body":
            if not raw:
                raw = b'{"code": 20, "error": "this body is cut short"}'
            hdrs.append(("Content-Length", str(len(raw) + 100)))
            self._resp = raw[: len(raw) // 2]
            self.close_connection = True
            self._mark(status)
            try:
                self.wfile.write(self._head(status, hdrs, raw_lines) + raw[: len(raw) // 2])
                self.wfile.flush()
                if f.get("rst"):
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
                    self.connection.close()
                else:
                    self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if action == "drip":
            rate = max(1, int(f.get("drip_bytes_per_sec", 1)))
            hdrs.append(("Content-Length", str(len(raw))))
            self._resp = raw
            self._mark(status)
            self.wfile.write(self._head(status, hdrs, raw_lines))
            self.wfile.flush()
            step = 1.0 / rate
            for i in range(len(raw)):
                if self.emu.stopping.is_set():
                    break
                try:
                    self.connection.sendall(raw[i:i + 1])
                except OSError:
                    self.close_connection = True
                    return
                if i + 1 < len(raw) and self._client_gone(step):
                    self.close_connection = True
                    return
            return
        if action == "endless":
            hdrs.append(("Transfer-Encoding", "chunked"))
            self.close_connection = True
            self._mark(status)
            fill = (f.get("fill") or "x").encode()
            chunk = fill * (16384 // len(fill) or 1)
            frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
            try:
                self.wfile.write(self._head(status, hdrs, raw_lines))
                self.wfile.flush()
                while not self.emu.stopping.is_set():
                    self.connection.sendall(frame)
                    time.sleep(0.001)
            except OSError:
                pass
            return
        if action == "large":
            # a Content-Length of `length` bytes, streamed without ever
            # being built in memory, until sent or the client goes away
            n = int(f.get("length", 512 * 1024 * 1024))
            head = b'{"lsm_stats": {"buckets": []}, "pad": "'
            hdrs.append(("Content-Length", str(n)))
            self.close_connection = True
            self._mark(status)
            try:
                self.wfile.write(self._head(status, hdrs, raw_lines))
                self.wfile.flush()
                sent = 0
                block = b"a" * 65536
                while sent < n and not self.emu.stopping.is_set():
                    part = (head if sent == 0 else block)[: n - sent]
                    self.connection.sendall(part)
                    sent += len(part)
            except OSError:
                pass
            return
        raise ControlError("unrecognized fault action %r" % action)


# --------------------------------------------------------------------------
# Control API
# --------------------------------------------------------------------------

def _bool(v, name):
    if not isinstance(v, bool):
        raise ControlError("%s must be a boolean" % name)
    return v


def _int(v, name, minimum=0):
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ControlError("%s must be an integer >= %d" % (name, minimum))
    return v


class Control:
    """The /_emulator/ control API."""

    def __init__(self, emu, handler=None):
        self.emu = emu
        self.handler = handler  # the request's own connection

    def handle(self, method, path, query, body):
        parts = [urllib.parse.unquote(p) for p in path.split("/")[2:] if p != ""]
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(query).items()}
        if body.strip():
            try:
                req = json.loads(body)
            except ValueError:
                raise ControlError("request body is not valid JSON")
        else:
            req = {}
        if not isinstance(req, dict):
            raise ControlError("request body must be a JSON object")
        emu = self.emu
        ok = {"ok": True}
        if parts == ["reset"] and method == "POST":
            emu.reset()
            return 200, ok
        if parts == ["tables"]:
            if method == "GET":
                with emu.lock:
                    return 200, {"tables": sorted(emu.tables)}
            if method == "POST":
                return self._create_table(req)
        if len(parts) >= 2 and parts[0] == "tables":
            return self._table_op(method, parts[1], parts[2:], req)
        if parts == ["node"] and method == "POST":
            return self._node(req)
        if parts == ["pool"]:
            if method == "POST":
                size = req.get("size")
                if size is not None:
                    _int(size, "size", 0)
                sat = req.get("saturated")
                if sat is not None:
                    _bool(sat, "saturated")
                emu.pool.configure(size, sat)
            return 200, emu.pool.state()
        if parts == ["config"]:
            if method == "POST":
                with emu.lock:
                    for k in ("pass_ms", "prefix_max", "seal_rows", "replay_ms",
                              "rtt_ms"):
                        if k in req:
                            setattr(emu, k, _int(req[k], k, 1 if k == "seal_rows" else 0))
            with emu.lock:
                return 200, {"ok": True, "pass_ms": emu.pass_ms,
                             "prefix_max": emu.prefix_max,
                             "seal_rows": emu.seal_rows,
                             "replay_ms": emu.replay_ms,
                             "rtt_ms": emu.rtt_ms}
        if parts == ["writers"]:
            if method == "POST":
                clock = req.get("clock", emu.writer_clock)
                if clock not in ("real", "manual"):
                    raise ControlError("clock must be \"real\" or \"manual\"")
                with emu.lock:
                    emu.writer_clock = clock
            with emu.lock:
                return 200, {"ok": True, "clock": emu.writer_clock}
        if parts == ["advance"] and method == "POST":
            secs = req.get("seconds")
            if isinstance(secs, bool) or not isinstance(secs, (int, float)) \
                    or secs < 0:
                raise ControlError("seconds must be a number >= 0")
            tick_ms = _int(req.get("tick_ms", 50), "tick_ms", 1)
            emu.advance(secs, tick_ms / 1000.0)
            return 200, ok
        if parts == ["behaviour"]:
            if method == "POST":
                with emu.lock:
                    if "keep_compacted" in req:
                        emu.keep_compacted = _bool(req["keep_compacted"],
                                                   "keep_compacted")
                    if "stale_reads" in req:
                        emu.stale_reads = _int(req["stale_reads"],
                                               "stale_reads", 0)
                    if "idle_compact_status" in req:
                        st = req["idle_compact_status"]
                        if st not in (202, 429) or isinstance(st, bool):
                            raise ControlError("idle_compact_status must be 202 or 429")
                        emu.idle_compact_status = st
            with emu.lock:
                return 200, {"ok": True, "keep_compacted": emu.keep_compacted,
                             "stale_reads": emu.stale_reads,
                             "idle_compact_status": emu.idle_compact_status}
        if parts == ["freshness"]:
            if method == "POST":
                self._freshness(req)
            return 200, emu.freshness_state()
        if parts == ["stats_keys"]:
            if method == "POST":
                keys = req.get("keys")
                if keys not in STATS_KEYS:
                    raise ControlError("keys must be one of %s"
                                       % ", ".join(sorted(STATS_KEYS)))
                with emu.lock:
                    emu.stats_keys = keys
            with emu.lock:
                return 200, {"ok": True, "keys": emu.stats_keys}
        if parts == ["latency"] and method == "POST":
            ms = _int(req.get("ms", 0), "ms")
            k = (str(req.get("table", "*")), str(req.get("route", "*")))
            with emu.lock:
                if ms:
                    emu.latency[k] = ms
                else:
                    emu.latency.pop(k, None)
            return 200, ok
        if parts == ["faults"] and method == "POST":
            return self._fault(req)
        if (parts == ["faults"] and method == "DELETE") or \
                (parts == ["faults", "clear"] and method == "POST"):
            with emu.lock:
                emu.faults = {}
                emu.latency = {}
            return 200, ok
        if parts == ["faults"] and method == "GET":
            with emu.lock:
                return 200, {"faults": [
                    {"table": k[0], "route": k[1], "queue": list(v)}
                    for k, v in emu.faults.items() if v],
                    "latency": [{"table": k[0], "route": k[1], "ms": v}
                                for k, v in emu.latency.items()]}
        if parts == ["log"] and method == "GET":
            with emu.lock:
                reqs = [dict(e) for e in emu.log
                        if ("table" not in q or e["table"] == q["table"])
                        and ("route" not in q or e["route"] == q["route"])]
            return 200, {"requests": reqs}
        if parts == ["passes"] and method == "GET":
            with emu.lock:
                passes = [dict(e) for e in emu.pass_log
                          if "table" not in q or e["table"] == q["table"]]
            return 200, {"passes": passes}
        if parts == ["log", "reset"] and method == "POST":
            emu.reset_log()
            return 200, ok
        if parts == ["counts"] and method == "GET":
            return 200, emu.counts(q.get("table"))
        if parts == ["counts", "tables"] and method == "GET":
            return 200, {"tables": emu.table_counts()}
        if parts == ["connections", "close_idle"] and method == "POST":
            return 200, {"ok": True, "closed": emu.close_idle(self.handler)}
        raise ControlError("no control route %s %s" % (method, path), 404)

    def _freshness(self, req):
        """POST /_emulator/freshness: replica lag (global or one table's),
        the routes answered without x-lancedb-version, the refusal of a
        read for a version the table never had."""
        emu = self.emu
        if "lag_ms" in req:
            table = req.get("table")
            if table is not None and not isinstance(table, str):
                raise ControlError("table must be a string")
            ms = req["lag_ms"]
            if ms is not None or table is None:
                ms = _int(ms, "lag_ms")
            emu.set_lag(ms, table)
        if "no_version_header" in req:
            routes = req["no_version_header"]
            if not isinstance(routes, list) or any(
                    r not in ALL_ROUTES + ("*",) for r in routes):
                raise ControlError("no_version_header must list routes or \"*\"")
            with emu.lock:
                emu.no_version_header = set(routes)
        if "ahead_status" in req:
            st = _int(req["ahead_status"], "ahead_status")
            if st and not 400 <= st <= 599:
                raise ControlError("ahead_status must be 0 or a 4xx/5xx status")
            with emu.lock:
                emu.ahead_status = st

    def _create_table(self, req):
        name = req.get("name")
        if not isinstance(name, str) or not name:
            raise ControlError("name must be a non-empty string")
        buckets = _int(req.get("buckets", 1), "buckets", 1)
        rps = req.get("rows_per_second", 0)
        if isinstance(rps, bool) or not isinstance(rps, (int, float)) or rps < 0:
            raise ControlError("rows_per_second must be a number >= 0")
        lsm = _bool(req.get("lsm", True), "lsm")
        idx = req.get("indexes", ["vec_idx"])
        if not isinstance(idx, list) or not all(isinstance(i, str) for i in idx):
            raise ControlError("indexes must be a list of strings")
        pk = req.get("primary_key", "id")
        if pk is not None and (not isinstance(pk, str) or not pk):
            raise ControlError("primary_key must be null or a non-empty string")
        sids = req.get("shard_ids")
        if sids is not None:
            if not isinstance(sids, list) or not sids or \
                    not all(isinstance(i, str) and i for i in sids) or \
                    len(set(sids)) != len(sids):
                raise ControlError("shard_ids must be a list of distinct non-empty strings")
            buckets = len(sids)
        self.emu.create_table(name, buckets, rps, lsm, idx, pk, sids)
        return 200, {"ok": True}

    def _node(self, req):
        emu = self.emu
        if req.get("restart"):
            emu.restart_node()
        if req.get("replayed") and emu.state_file is not None:
            emu.state_file.replayed()
        if "draining" in req:
            with emu.lock:
                emu.draining = _bool(req["draining"], "draining")
                emu.draining_until = None
                if emu.draining and req.get("draining_ms") is not None:
                    emu.draining_until = time.monotonic() + \
                        _int(req["draining_ms"], "draining_ms") / 1000.0
        if "replay_ms" in req:
            with emu.lock:
                emu.replay_ms = _int(req["replay_ms"], "replay_ms")
        return 200, {"ok": True}

    def _fault(self, req):
        action = req.get("action", "respond")
        if action not in ("respond", "hang", "close_before_headers",
                          "close_mid_body", "reset", "drip", "endless", "large",
                          "redirect"):
            raise ControlError("unrecognized action %r" % action)
        count = req.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or \
                (count < 1 and count != -1):
            raise ControlError("count must be a positive integer or -1")
        if "status" in req:
            _int(req["status"], "status", 100)
        m = req.get("mutate")
        if m is not None:
            kind = str(m).partition(":")[0]
            if kind not in ("truncate", "not_json", "html", "missing", "mistype",
                            "negative", "huge", "extra", "nest", "duplicate",
                            "null"):
                raise ControlError("unrecognized mutate %r" % m)
        if "headers" in req and not isinstance(req["headers"], dict):
            raise ControlError("headers must be an object")
        if "max_ms" in req:
            _int(req["max_ms"], "max_ms", 1)
        if "for_ms" in req:
            _int(req["for_ms"], "for_ms", 1)
        route = str(req.get("route", "*"))
        if route not in ALL_ROUTES + ("*",):
            raise ControlError("unrecognized route %r" % route)
        f = dict(req)
        f["action"] = action
        f["count"] = count
        f["until"] = None
        k = (str(req.get("table", "*")), route)
        with self.emu.lock:
            self.emu.faults.setdefault(k, collections.deque()).append(f)
        return 200, {"ok": True}

    def _table_op(self, method, name, rest, req):
        emu = self.emu
        with emu.lock:
            t = emu.table(name)
        if not rest:
            if method == "GET":
                with emu.lock:
                    return 200, t.state()
            if method == "DELETE":
                rest = ["drop"]
            else:
                raise ControlError("no control route %s" % method, 404)
        op = rest[0]
        if method != "POST" or len(rest) != 1:
            raise ControlError("no control route %s %s" % (method, "/".join(rest)), 404)
        ok = {"ok": True}
        with emu.lock:
            if op == "write":
                rows = _int(req.get("rows", 1), "rows")
                b = req.get("bucket")
                if "value" in req:
                    if t.spec is None or t.spec["sharding"]["mode"] != "identity":
                        raise ControlError("value is for identity-sharded tables")
                    b = t.identity_bucket(str(req["value"])).shard_id
                if b is not None:
                    t.bucket(b)
                emu.write(t, rows, b)
                return 200, ok
            if op == "generations":
                count = _int(req.get("count", 1), "count")
                rows = _int(req.get("rows", 10), "rows", 1)
                names = req.get("buckets") or [b.shard_id for b in t.buckets]
                bs = [t.bucket(n) for n in names]
                for b in bs:
                    for _ in range(count):
                        b.append(rows)
                        b.seal()
                emu.changed(t)
                return 200, ok
            if op == "lsm":
                t.lsm = _bool(req.get("enabled"), "enabled")
                if not t.lsm:
                    t.spec = None
                elif t.spec is None:
                    if not t.buckets:
                        t.buckets = [Bucket("b0", t.indexes)]
                    t.spec = t.default_spec(len(t.buckets))
                emu.changed(t)
                return 200, ok
            if op == "writer":
                if "rows_per_second" in req:
                    r = req["rows_per_second"]
                    if isinstance(r, bool) or not isinstance(r, (int, float)) or r < 0:
                        raise ControlError("rows_per_second must be a number >= 0")
                    with self.emu.lock:
                        if t.rows_per_second <= 0:
                            # its ticks start now, not when it last wrote
                            t.writer_last = time.monotonic()
                            t.writer_carry = 0.0
                        t.rows_per_second = float(r)
                        self.emu.writing_stale = True
                if "paused" in req:
                    t.paused = _bool(req["paused"], "paused")
                return 200, ok
            if op == "pass_script":
                script = req.get("pass_ms")
                if not isinstance(script, list):
                    raise ControlError("pass_ms must be a list of durations")
                t.pass_script = collections.deque(
                    _int(ms, "pass_ms") for ms in script)
                return 200, ok
            if op == "dropping":
                t.dropping = _bool(req.get("dropping"), "dropping")
                return 200, ok
            if op == "drop":
                t.alive = False
                del emu.tables[name]
                return 200, ok
            if op == "latch":
                b = t.bucket(req.get("bucket"))
                b.pinned = _bool(req.get("held"), "held")
                emu.changed(t)
                return 200, ok
            if op == "compact":
                ms = req.get("pass_ms")
                if ms is not None:
                    _int(ms, "pass_ms")
                return 200, {"ok": True, "latched": emu.compact(t, ms)}
            if op == "claim":
                t.claimed = _bool(req.get("claimed"), "claimed")
                t.replaying = False
                t.flush_claims_only = False   # no longer just restarted
                emu.changed(t)
                return 200, ok
            if op == "bucket":
                b = t.bucket(req.get("bucket"))
                if "status" in req:
                    if not isinstance(req["status"], str) or not req["status"]:
                        raise ControlError("status must be a non-empty string")
                    b.status = req["status"]
                for k, attr in (("writer_epoch", "writer_epoch"),
                                ("manifest_version", "manifest_version"),
                                ("replay_after_wal_entry_position", "replay_after"),
                                ("wal_entry_position_last_seen", "wal_last")):
                    if k in req:
                        setattr(b, attr, _int(req[k], k))
                emu.changed(t)
                return 200, ok
        raise ControlError("no control route POST tables/%s/%s" % (name, op), 404)


# --------------------------------------------------------------------------
# state file: surviving kill -9
# --------------------------------------------------------------------------

BUCKET_FIELDS = ("shard_id", "status", "writer_epoch", "manifest_version",
                 "current_generation", "replay_after", "wal_last", "l0",
                 "indexes", "memtables")
TABLE_FIELDS = ("name", "lsm", "indexes", "primary_key", "spec",
                "rows_per_second", "paused", "rr", "passes_completed",
                "passes_dispatched", "version")


class StateFile:
    """What a node keeps on disk, written to --state-file (temp file and
    rename, so a kill -9 leaves the previous or the new state, never half
    of one) every PERIOD seconds when it changed.  Kept: per table the
    LSM flag, spec, indexes, writer settings, and per bucket the WAL
    positions, memtables and L0.  Not kept, as a crash loses them:
    claims, replays, latches and pins, passes in flight, faults, latency,
    draining, the log.

    restore() starts a node from the file as a restarted one: every table
    unclaimed and replaying its WAL (429 code 7 on every route) for
    replay_ms or until POST /_emulator/node {"replayed": true}; then
    unclaimed: compact and stats answer 421 until a flush claims the
    table again (the per-claim replay of --replay-ms first)."""

    PERIOD = 0.05

    def __init__(self, emu, path):
        self.emu, self.path = emu, path
        self.last = None
        self.replay_timer = None

    def snapshot(self):
        """The durable state as JSON text (under the emulator's lock)."""
        with self.emu.lock:
            tables = []
            for t in self.emu.tables.values():
                d = {k: getattr(t, k) for k in TABLE_FIELDS}
                d["buckets"] = [{k: getattr(b, k) for k in BUCKET_FIELDS}
                                for b in t.buckets]
                tables.append(d)
            return json.dumps({"tables": tables}, sort_keys=True)

    def write(self):
        """Write the state if it changed since the last write."""
        text = self.snapshot()
        if text == self.last:
            return
        tmp = "%s.tmp.%d" % (self.path, os.getpid())
        with open(tmp, "w") as fh:
            fh.write(text)
        os.replace(tmp, self.path)
        self.last = text

    def _loop(self):
        while not self.emu.stopping.is_set():
            try:
                self.write()
            except OSError as e:
                sys.stderr.write("lsm-emulator: state file: %s\n" % e)
            self.emu.stopping.wait(self.PERIOD)

    def start(self):
        threading.Thread(target=self._loop, name="state-file",
                         daemon=True).start()

    @staticmethod
    def _table(d):
        t = Table(d["name"], 0, d["rows_per_second"], d["lsm"], d["indexes"],
                  d["primary_key"])
        for k in TABLE_FIELDS:
            if k in d:   # a file written before versions had none
                setattr(t, k, d[k])
        for bd in d["buckets"]:
            b = Bucket(bd["shard_id"], bd["indexes"])
            for k in BUCKET_FIELDS:
                setattr(b, k, bd[k])
            t.buckets.append(b)
        return t

    def restore(self, replay_ms):
        """Replace the tables with the file's, as a node restarted after
        a crash; returns False when there is no file yet."""
        try:
            with open(self.path) as fh:
                state = json.load(fh)
        except FileNotFoundError:
            return False
        emu = self.emu
        with emu.lock:
            for t in emu.tables.values():
                t.alive = False
            emu.tables = {}
            for d in state["tables"]:
                emu.tables[d["name"]] = self._table(d)
            emu.writing_stale = True
            emu.ensure_writer()
        emu.restart_node()
        with emu.lock:
            for t in emu.tables.values():
                t.replaying = True
                t.flush_claims_only = True
        self.replay_timer = threading.Timer(replay_ms / 1000.0, self.replayed)
        self.replay_timer.daemon = True
        self.replay_timer.start()
        return True

    def replayed(self):
        """The restart's WAL replay is over: tables stay unclaimed."""
        with self.emu.lock:
            for t in self.emu.tables.values():
                if t.flush_claims_only:
                    t.replaying = False


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def parse_table(spec):
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not parts[0]:
        raise argparse.ArgumentTypeError("--table wants NAME:BUCKETS[:ROWS_PER_SECOND]")
    try:
        buckets = int(parts[1])
        rps = float(parts[2]) if len(parts) == 3 else 0.0
    except ValueError:
        raise argparse.ArgumentTypeError("--table wants NAME:BUCKETS[:ROWS_PER_SECOND]")
    if buckets < 1 or rps < 0:
        raise argparse.ArgumentTypeError("--table: BUCKETS >= 1, ROWS_PER_SECOND >= 0")
    return (parts[0], buckets, rps)


def main(argv=None):
    ap = argparse.ArgumentParser(description="LanceDB LSM route emulator")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--api-key", required=True)
    ap.add_argument("--table", type=parse_table, action="append", default=[])
    ap.add_argument("--pass-ms", type=int, default=300)
    ap.add_argument("--prefix-max", type=int, default=1)
    ap.add_argument("--pool", type=int, default=2)
    ap.add_argument("--replay-ms", type=int, default=200)
    ap.add_argument("--seal-rows", type=int, default=1000)
    ap.add_argument("--rtt-ms", type=int, default=0,
                    help="answer every route request this many ms late, as "
                         "a network's round trip would (other connections "
                         "are served meanwhile)")
    ap.add_argument("--stats-keys", choices=sorted(STATS_KEYS),
                    default="generations",
                    help="spell get_lsm_stats keys as released (generations) "
                         "or renamed (sstables)")
    ap.add_argument("--quiet", action="store_true", help="no per-request log")
    ap.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    ap.add_argument("--tls-key", help="the certificate's private key (PEM)")
    ap.add_argument("--tls-client-ca",
                    help="require a client certificate signed by this CA")
    ap.add_argument("--max-lifetime", type=float, default=0,
                    help="exit after this many seconds (0: run until signalled)")
    ap.add_argument("--state-file",
                    help="keep the tables' durable state in this file and "
                         "start from it, as a node restarted after a crash")
    ap.add_argument("--restart-replay-ms", type=int, default=1000,
                    help="with --state-file: the WAL replay after a restart")
    a = ap.parse_args(argv)
    if a.max_lifetime < 0:
        ap.error("--max-lifetime wants seconds >= 0")
    if a.rtt_ms < 0:
        ap.error("--rtt-ms wants milliseconds >= 0")
    if bool(a.tls_cert) != bool(a.tls_key) or (a.tls_client_ca and not a.tls_cert):
        ap.error("--tls-cert and --tls-key go together; --tls-client-ca needs them")
    ctx = make_ssl_context(a.tls_cert, a.tls_key, a.tls_client_ca) \
        if a.tls_cert else None
    emu = Emulator(a.api_key, a.table, pass_ms=a.pass_ms,
                   prefix_max=a.prefix_max, pool=a.pool, replay_ms=a.replay_ms,
                   seal_rows=a.seal_rows, host=a.host, port=a.port,
                   quiet=a.quiet, ssl_context=ctx, stats_keys=a.stats_keys,
                   rtt_ms=a.rtt_ms)
    if a.state_file:
        emu.state_file = StateFile(emu, a.state_file)
        emu.state_file.restore(a.restart_replay_ms)
        emu.state_file.start()
    server = make_server(a.host, a.port, ctx)
    server.emu = emu
    emu.server = server
    port = server.server_address[1]
    if a.port_file:
        tmp = "%s.tmp.%d" % (a.port_file, os.getpid())
        with open(tmp, "w") as fh:
            fh.write("%d\n" % port)
        os.replace(tmp, a.port_file)

    def on_signal(signum, frame):
        emu.stopping.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # a bound for callers that may never get to stop it (an interrupted
    # test run): the same clean shutdown as a signal, once the time is up
    if a.max_lifetime > 0:
        timer = threading.Timer(a.max_lifetime, on_signal, (None, None))
        timer.daemon = True
        timer.start()
    sys.stderr.write("lsm-emulator listening on %s:%d\n" % (a.host, port))
    sys.stderr.flush()
    try:
        server.serve_forever(poll_interval=0.05)
    finally:
        emu.stopping.set()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
