#!/usr/bin/env python3
"""The protocol fingerprint of scripts/live-smoke.sh.

Talks to the LanceDB server directly (Python standard library only), with
the same environment as live-smoke.sh (LANCELSM_LIVE_DATABASE,
LANCELSM_LIVE_API_KEY, LANCELSM_LIVE_TABLE, LANCELSM_LIVE_REGION,
LANCELSM_LIVE_HOST_OVERRIDE), and prints what the server does where the
SDKs' source leaves it open, as a block the user can paste back:

  * the status and body length of flush and compact;
  * whether the stats read right after a flush show the generation it
    sealed (the watermark read);
  * whether compacted generations leave `generations` once their pass
    ends, or stay listed;
  * what compact answers when nothing is left to compact;
  * the bucket status spellings, the stats key spelling, and which
    optional (and unrecognized) members the stats answers carry.

It flushes and compacts the table (as live-smoke.sh's checkpoint does) and
changes nothing else.  LANCELSM_LIVE_FINGERPRINT_WAIT (seconds, default
120) bounds the wait for compaction passes.  The API key is read from the
environment and never printed.  Exit status 0 once the block is printed,
1 when a request fails in a way that stops it (the block says which).
"""

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

REQUEST_TIMEOUT_S = 60
POLL_S = 1.0

# The members of the stats answer in SDK 0.39.0's types (checkpoint.rs),
# the renamed spelling of the pending upstream rename (lsm_stats.rs), and
# which of them are optional.
KNOWN = {
    "top": {"lsm_stats"},
    "lsm_stats": {"buckets", "table_shards"},
    "bucket": {"shard_id", "status", "writer_epoch", "manifest_version",
               "current_generation", "replay_after_wal_entry_position",
               "wal_entry_position_last_seen", "generations", "sstables",
               "compacting", "memtables"},
    "generation": {"generation", "bytes", "rows"},
    "memtable": {"generation", "rows", "bytes", "batches", "indexes"},
}


class Server:
    """The table's LSM routes, as plain HTTP exchanges."""

    def __init__(self, env):
        self.key = env["LANCELSM_LIVE_API_KEY"]
        host = env.get("LANCELSM_LIVE_HOST_OVERRIDE", "")
        db = env["LANCELSM_LIVE_DATABASE"]
        if host:
            self.base = host.rstrip("/")
            self.headers = {"x-lancedb-database": db}
        else:
            region = env.get("LANCELSM_LIVE_REGION") or "us-east-1"
            self.base = "https://%s.%s.api.lancedb.com" % (db, region)
            self.headers = {}
        self.table = urllib.parse.quote(env["LANCELSM_LIVE_TABLE"], safe="")
        self.rows_key = "include_generation_rows"

    def call(self, route, body=None):
        """POST one route: (status, body bytes); status 0 when no answer."""
        headers = dict(self.headers)
        headers["user-agent"] = "lancelsm-live-fingerprint/1"
        if self.key:
            headers["x-api-key"] = self.key
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        req = urllib.request.Request("%s/v1/table/%s/%s/" % (self.base, self.table, route),
                                     data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT_S) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except (urllib.error.URLError, OSError) as e:
            return 0, self.redact(str(e)).encode()

    def redact(self, text):
        return text.replace(self.key, "***") if self.key else text

    def stats(self, rows=False):
        """The decoded stats answer: (status, object or None, raw body)."""
        status, raw = self.call("get_lsm_stats", {self.rows_key: rows})
        if status // 100 != 2:
            return status, None, raw
        try:
            return status, json.loads(raw), raw
        except ValueError:
            return status, None, raw


class Observed:
    """What the stats answers showed, over the whole run."""

    def __init__(self):
        self.statuses = set()
        self.spelling = set()
        self.members = {level: set() for level in KNOWN}
        self.memtables = {"present": 0, "absent": 0, "null": 0}
        self.rows = {"present": 0, "absent": 0}

    def note(self, answer, rows_asked):
        if not isinstance(answer, dict):
            return
        self.members["top"].update(answer)
        lsm = answer.get("lsm_stats")
        if not isinstance(lsm, dict):
            return
        self.members["lsm_stats"].update(lsm)
        for bucket in buckets_of(lsm):
            self.members["bucket"].update(bucket)
            self.statuses.add(json.dumps(bucket.get("status")))
            mem = bucket.get("memtables", "absent")
            self.memtables["null" if mem is None else "absent" if mem == "absent" else "present"] += 1
            for m in mem if isinstance(mem, list) else []:
                if isinstance(m, dict):
                    self.members["memtable"].update(m)
            for g in generations_of(bucket):
                self.members["generation"].update(g)
                if rows_asked:
                    self.rows["present" if "rows" in g else "absent"] += 1
        self.spelling.add("table_shards/sstables" if "table_shards" in lsm
                          else "buckets/generations")

    def lines(self):
        unknown = ["%s.%s" % (level, k) for level in KNOWN
                   for k in sorted(self.members[level] - KNOWN[level])]
        return [
            "bucket status spellings: %s" % (", ".join(sorted(self.statuses)) or "not observed (no bucket)"),
            "stats key spelling: %s" % (", ".join(sorted(self.spelling)) or "not observed"),
            "optional memtables: present in %(present)d, absent in %(absent)d, null in %(null)d bucket answers"
            % self.memtables,
            "optional generation rows (asked for): present in %(present)d, absent in %(absent)d generations"
            % self.rows,
            "unrecognized members: %s" % (", ".join(unknown) or "none"),
        ]


def buckets_of(lsm):
    b = lsm.get("buckets", lsm.get("table_shards"))
    return [x for x in b if isinstance(x, dict)] if isinstance(b, list) else []


def generations_of(bucket):
    g = bucket.get("generations", bucket.get("sstables"))
    return [x for x in g if isinstance(x, dict)] if isinstance(g, list) else []


def l0(answer):
    """{shard_id: [generation, ...]} of a decoded answer ({} for none)."""
    lsm = answer.get("lsm_stats") if isinstance(answer, dict) else None
    if not isinstance(lsm, dict):
        return {}
    return {str(b.get("shard_id")): [g.get("generation") for g in generations_of(b)]
            for b in buckets_of(lsm)}


def compacting(answer):
    lsm = answer.get("lsm_stats") if isinstance(answer, dict) else None
    return {str(b.get("shard_id")): b.get("compacting") is True
            for b in buckets_of(lsm)} if isinstance(lsm, dict) else {}


def answer_line(status, raw):
    """status, body length and, for an error body, its code."""
    text = "status %s, body %d bytes" % (status or "none (no answer)", len(raw))
    try:
        code = json.loads(raw).get("code")
        if code is not None:
            text += ", code %s" % code
    except (ValueError, AttributeError):
        pass
    return text


def sealed_by_flush(before):
    """{shard_id: generation} the flush should seal: active memtables with rows."""
    lsm = before.get("lsm_stats") if isinstance(before, dict) else None
    out = {}
    for b in buckets_of(lsm) if isinstance(lsm, dict) else []:
        mems = b.get("memtables")
        if isinstance(mems, list) and mems and isinstance(mems[-1], dict) and \
                (mems[-1].get("rows") or 0) > 0:
            out[str(b.get("shard_id"))] = mems[-1].get("generation")
    return out


def watermark_line(before, after):
    expect = sealed_by_flush(before)
    if not expect:
        return "not observed (no active memtable held rows before the flush)"
    listed = l0(after)
    shown = sorted(s for s, g in expect.items() if g in listed.get(s, []))
    missing = sorted(s for s in expect if s not in shown)
    if not missing:
        return "shows the sealed generation (%d of %d buckets)" % (len(shown), len(expect))
    return "does not show the sealed generation in %d of %d buckets (%s)" % (
        len(missing), len(expect), ", ".join("%s: %s" % (s, expect[s]) for s in missing[:4]))


def drain(server, seen, wait_s):
    """Compact until L0 is empty or wait_s runs out, watching the passes.

    Returns (lines about the compact answers, the compacted-generations
    line, whether L0 ended empty)."""
    answers = []
    first = None
    ended = 0           # passes seen running, then over
    gone = 0            # generations that left L0
    listed = None
    was_busy = {}
    deadline = time.monotonic() + wait_s
    while True:
        status, answer, raw = server.stats()
        if answer is None:
            return ([], "not observed (stats answered %s)" % answer_line(status, raw), False)
        seen.note(answer, False)
        gens = l0(answer)
        busy = compacting(answer)
        ended += sum(1 for s, on in was_busy.items() if on and not busy.get(s))
        if listed is not None:
            gone += sum(1 for s, gs in listed.items() for g in gs if g not in gens.get(s, []))
        listed, was_busy = gens, busy
        if not any(gens.values()) or time.monotonic() >= deadline:
            break
        if not any(busy.values()):
            status, raw = server.call("compact_lsm")
            first = first or answer_line(status, raw)
            answers.append(str(status))
        time.sleep(POLL_S)
    if gone:
        fate = "leave generations when their pass ends (%d left, %d passes seen ending)" % (gone, ended)
    elif ended:
        fate = "stay listed after their pass ended (%d passes seen ending, none left)" % ended
    elif any(a.startswith("2") for a in answers):
        fate = ("stay listed, it seems: %d compacts accepted, no generation left within %d s "
                "(no pass seen running)" % (sum(a.startswith("2") for a in answers), wait_s))
    elif answers:
        fate = "not observed (compact accepted nothing within %d s)" % wait_s
    else:
        fate = "not observed (no L0 to compact)"
    lines = ["compact: %s" % (first or "not called (L0 empty)")]
    if answers:
        lines.append("compact statuses while draining: %s" % ", ".join(answers))
    return lines, fate, not any(listed.values())


def main():
    env = os.environ
    server = Server(env)
    wait_s = int(env.get("LANCELSM_LIVE_FINGERPRINT_WAIT") or 120)
    seen = Observed()
    out = ["== protocol fingerprint (paste this block back)",
           "fingerprint version: 1"]
    status, before, raw = server.stats(rows=True)
    if before is None:
        out.append("stats: %s (%s)" % (answer_line(status, raw),
                                        server.redact(raw[:200].decode("utf-8", "replace"))))
        out.append("== end of fingerprint")
        print("\n".join(out))
        return 1
    seen.note(before, True)
    if not isinstance(before.get("lsm_stats"), dict):
        out.append("stats: lsm_stats is %s: the table has no LSM write path"
                   % json.dumps(before.get("lsm_stats")))
    status, raw = server.call("flush_lsm")
    out.append("flush: %s" % answer_line(status, raw))
    _, after, _ = server.stats()
    seen.note(after, False)
    out.append("watermark read right after the flush: %s" % watermark_line(before, after or {}))
    compact_lines, fate, empty = drain(server, seen, wait_s)
    out.extend(compact_lines)
    out.append("compacted generations: %s" % fate)
    if empty:
        status, raw = server.call("compact_lsm")
        out.append("compact with nothing left to compact: %s" % answer_line(status, raw))
    else:
        out.append("compact with nothing left to compact: not observed (L0 not empty after %d s)" % wait_s)
    status, final, _ = server.stats(rows=True)
    seen.note(final, True)
    out.extend(seen.lines())
    out.append("== end of fingerprint")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
