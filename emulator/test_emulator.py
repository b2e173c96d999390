"""Unit tests of the LSM route emulator: state machine and HTTP surface.

Run: python3 -m unittest discover -s emulator -p 'test_*.py'
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lsm_emulator as emu_mod  # noqa: E402

KEY = "secret"


class StateMachineTest(unittest.TestCase):
    """The model without HTTP."""

    def test_seal_and_noop(self):
        b = emu_mod.Bucket("b0", ["vec_idx"])
        self.assertFalse(b.seal())
        self.assertEqual(b.manifest_version, 1)
        b.append(5)
        b.append(3)
        self.assertEqual(b.wal_last, 2)
        self.assertEqual(b.active(), {"generation": 1, "rows": 8, "bytes": 512,
                                      "batches": 2, "indexes": ["vec_idx"]})
        self.assertTrue(b.seal())
        self.assertEqual(b.l0, [{"generation": 1, "bytes": 512, "rows": 8}])
        self.assertEqual((b.current_generation, b.replay_after, b.manifest_version),
                         (2, 2, 2))
        self.assertEqual(b.active()["rows"], 0)
        self.assertEqual(b.active()["generation"], 2)

    def test_auto_seal_at_threshold(self):
        e = emu_mod.Emulator(KEY, [("t", 1, 0)], seal_rows=10, quiet=True)
        t = e.tables["t"]
        e.write(t, 9)
        self.assertEqual(t.buckets[0].l0, [])
        e.write(t, 1)
        self.assertEqual([g["generation"] for g in t.buckets[0].l0], [1])
        self.assertEqual(t.buckets[0].current_generation, 2)
        e.stop()

    def test_round_robin_write(self):
        e = emu_mod.Emulator(KEY, [("t", 3, 0)], quiet=True)
        t = e.tables["t"]
        e.write(t, 7)
        self.assertEqual([b.active()["rows"] for b in t.buckets], [3, 2, 2])
        self.assertEqual([b.active()["batches"] for b in t.buckets], [1, 1, 1])
        e.stop()

    def test_compact_pass_prefix_and_pool(self):
        e = emu_mod.Emulator(KEY, [("t", 2, 0)], pass_ms=50, prefix_max=2,
                             pool=1, quiet=True)
        t = e.tables["t"]
        for b in t.buckets:
            for _ in range(3):
                b.append(1)
                b.seal()
        self.assertEqual(e.compact(t), 2)
        self.assertEqual(e.compact(t), 0)  # both latched
        self.assertTrue(all(b.compacting for b in t.buckets))
        deadline = time.time() + 3
        while t.passes_completed < 2 and time.time() < deadline:
            time.sleep(0.01)
        self.assertEqual(t.passes_completed, 2)
        self.assertEqual([[g["generation"] for g in b.l0] for b in t.buckets],
                         [[3], [3]])
        self.assertFalse(any(b.compacting for b in t.buckets))
        self.assertEqual(t.buckets[0].manifest_version, 5)
        e.stop()

    def test_saturated_pool_holds_latch_and_restart_abandons(self):
        e = emu_mod.Emulator(KEY, [("t", 1, 0)], pass_ms=10, quiet=True)
        t = e.tables["t"]
        b = t.buckets[0]
        b.append(1)
        b.seal()
        e.pool.configure(saturated=True)
        self.assertEqual(e.compact(t), 1)
        time.sleep(0.2)
        self.assertTrue(b.compacting)
        self.assertEqual(len(b.l0), 1)
        e.restart_node()
        self.assertFalse(b.compacting)
        self.assertFalse(t.claimed)
        e.pool.configure(saturated=False)
        time.sleep(0.2)
        self.assertEqual(len(b.l0), 1)  # the abandoned pass did nothing
        self.assertEqual(t.passes_completed, 0)
        e.stop()

    def test_pass_script_sets_each_pass_duration(self):
        e = emu_mod.Emulator(KEY, [("t", 2, 0)], pass_ms=60000, pool=2,
                             quiet=True)
        t = e.tables["t"]
        for b in t.buckets:
            b.append(1)
            b.seal()
        t.pass_script.extend([20, 60000])
        self.assertEqual(e.compact(t), 2)
        self.assertEqual(list(t.pass_script), [])
        deadline = time.time() + 10
        while t.passes_completed < 1 and time.time() < deadline:
            time.sleep(0.01)
        self.assertEqual(t.passes_completed, 1)
        self.assertEqual([b.compacting for b in t.buckets], [False, True])
        e.stop()

    def test_one_writer_thread_for_all_tables(self):
        before = threading.active_count()
        e = emu_mod.Emulator(KEY, [("t%d" % i, 1, 0) for i in range(50)],
                             quiet=True)
        e.tables["t7"].rows_per_second = 100
        self.assertLessEqual(threading.active_count() - before, 1)
        deadline = time.time() + 10
        while e.tables["t7"].buckets[0].active()["rows"] < 5 and \
                time.time() < deadline:
            time.sleep(0.01)
        self.assertGreaterEqual(e.tables["t7"].buckets[0].active()["rows"], 5)
        self.assertEqual(e.tables["t8"].buckets[0].active()["rows"], 0)
        e.stop()

    def test_advance_writes_what_the_seconds_would_have(self):
        e = emu_mod.Emulator(KEY, [("t", 2, 0), ("idle", 1, 0)], seal_rows=100,
                             quiet=True)
        e.writer_clock = "manual"
        e.tables["t"].rows_per_second = 30
        e.writing_stale = True
        time.sleep(0.2)    # the writers' thread ticks, but writes nothing
        self.assertEqual([b.wal_last for b in e.tables["t"].buckets], [0, 0])
        e.advance(10, 1.0)    # 300 rows, 15 a tick per bucket
        t = e.tables["t"]
        self.assertEqual([b.wal_last for b in t.buckets], [10, 10])
        self.assertEqual([len(b.l0) for b in t.buckets], [1, 1])
        self.assertEqual([b.l0[0]["rows"] for b in t.buckets], [105, 105])
        self.assertEqual([b.active()["rows"] for b in t.buckets], [45, 45])
        self.assertEqual(e.tables["idle"].buckets[0].wal_last, 0)
        e.stop()

    def test_mutations(self):
        obj = {"lsm_stats": {"buckets": [{"a": 1, "s": "x", "g": [{"n": 2}]}]}}
        raw = json.dumps(obj).encode()
        body, _ = emu_mod.mutate(obj, raw, "missing:lsm_stats.buckets.0.a")
        self.assertNotIn('"a"', body.decode())
        body, _ = emu_mod.mutate(obj, raw, "mistype:lsm_stats.buckets.0.a")
        self.assertEqual(json.loads(body)["lsm_stats"]["buckets"][0]["a"], "x")
        body, _ = emu_mod.mutate(obj, raw, "mistype:lsm_stats.buckets.0.s")
        self.assertEqual(json.loads(body)["lsm_stats"]["buckets"][0]["s"], 1)
        body, _ = emu_mod.mutate(obj, raw, "negative:lsm_stats.buckets.0.g.0.n")
        self.assertEqual(json.loads(body)["lsm_stats"]["buckets"][0]["g"][0]["n"], -2)
        body, _ = emu_mod.mutate(obj, raw, "huge:lsm_stats.buckets.0.a")
        self.assertIn(b"18446744073709551616", body)
        body, _ = emu_mod.mutate(obj, raw, "duplicate:lsm_stats.buckets.0.a")
        self.assertEqual(body.count(b'"a": 1'), 2)
        body, _ = emu_mod.mutate(obj, raw, "nest:3")
        self.assertEqual(json.loads(body)[0][0][0], obj)
        body, _ = emu_mod.mutate(obj, raw, "extra")
        self.assertIn("x_emulator_extra", json.loads(body)["lsm_stats"]["buckets"][0])
        body, _ = emu_mod.mutate(obj, raw, "truncate")
        self.assertEqual(body, raw[: len(raw) // 2])
        body, ctype = emu_mod.mutate(obj, raw, "html")
        self.assertEqual(ctype, "text/html")
        self.assertEqual(len(emu_mod.oversized_body(100000)), 100000)
        json.loads(emu_mod.oversized_body(100000))


class HttpTest(unittest.TestCase):
    """The HTTP surface, against an in-process server."""

    def setUp(self):
        self.emu = emu_mod.Emulator(KEY, [("events", 2, 0), ("other", 1, 0)],
                                    pass_ms=50, replay_ms=200, quiet=True)
        self.port = self.emu.start()

    def tearDown(self):
        self.emu.stop()

    def conn(self, timeout=5):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def req(self, route, table="events", body=None, key=KEY, conn=None,
            path=None, extra=None):
        c = conn or self.conn()
        headers = {"content-type": "application/json"}
        headers.update(extra or {})
        if key is not None:
            headers["x-api-key"] = key
        c.request("POST", path or "/v1/table/%s/%s/" % (table, route),
                  body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        if conn is None:
            c.close()
        return r, data

    def ctl(self, path, body=None, method=None):
        c = self.conn()
        method = method or ("GET" if body is None else "POST")
        c.request(method, "/_emulator/" + path,
                  body=None if body is None else json.dumps(body))
        r = c.getresponse()
        data = json.loads(r.read() or b"null")
        c.close()
        return r.status, data

    def stats(self, table="events", rows=False):
        r, data = self.req("get_lsm_stats", table,
                           json.dumps({"include_generation_rows": rows}))
        self.assertEqual(r.status, 200, data)
        return json.loads(data)

    def wait(self, pred, timeout=3):
        end = time.time() + timeout
        while time.time() < end:
            if pred():
                return True
            time.sleep(0.02)
        return False

    # ---- routes ----------------------------------------------------------

    def test_stats_exact_json(self):
        self.ctl("tables/events/generations", {"count": 1, "rows": 3})
        self.ctl("tables/events/write", {"rows": 4, "bucket": "b1"})
        r, data = self.req("get_lsm_stats", body=b"")
        self.assertEqual(r.getheader("Content-Type"), "application/json")
        b1 = json.loads(data)["lsm_stats"]["buckets"][1]
        self.assertEqual(list(b1), [
            "shard_id", "status", "writer_epoch", "manifest_version",
            "current_generation", "replay_after_wal_entry_position",
            "wal_entry_position_last_seen", "generations", "compacting",
            "memtables"])
        self.assertEqual(b1["generations"], [{"generation": 1, "bytes": 192}])
        self.assertEqual(b1["memtables"], [{"generation": 2, "rows": 4,
                         "bytes": 256, "batches": 1, "indexes": ["vec_idx"]}])
        self.assertEqual((b1["wal_entry_position_last_seen"],
                          b1["replay_after_wal_entry_position"]), (2, 1))
        s = self.stats(rows=True)
        self.assertEqual(s["lsm_stats"]["buckets"][0]["generations"],
                         [{"generation": 1, "bytes": 192, "rows": 3}])
        self.ctl("tables/events/bucket", {"bucket": "b0", "status": "Sealed"})
        b0 = self.stats()["lsm_stats"]["buckets"][0]
        self.assertEqual(b0["status"], "Sealed")
        self.assertNotIn("memtables", b0)

    def test_flush_and_compact(self):
        self.ctl("tables/events/write", {"rows": 10})
        r, data = self.req("flush_lsm")
        self.assertEqual((r.status, data, r.getheader("Content-Length")),
                         (202, b"", "0"))
        s = self.stats()["lsm_stats"]["buckets"]
        self.assertEqual([len(b["generations"]) for b in s], [1, 1])
        self.assertEqual(s[0]["current_generation"], 2)
        r, _ = self.req("flush_lsm")  # empty memtables: no-op
        self.assertEqual(r.status, 202)
        self.assertEqual(self.stats()["lsm_stats"]["buckets"][0]["manifest_version"], 2)
        # the passes wait for a permit, holding their latches, until the
        # checks of the latched state are done (a 50 ms pass can end before
        # the next request on a loaded machine)
        self.ctl("pool", {"saturated": True})
        r, data = self.req("compact_lsm")
        self.assertEqual((r.status, data), (202, b""))
        self.assertTrue(all(b["compacting"] for b in self.stats()["lsm_stats"]["buckets"]))
        r, data = self.req("compact_lsm")  # all latched
        self.assertEqual(r.status, 429)
        self.assertEqual(json.loads(data)["code"], emu_mod.CODE_CONTENTION)
        self.ctl("pool", {"saturated": False})
        self.assertTrue(self.wait(lambda: not any(
            b["generations"] or b["compacting"]
            for b in self.stats()["lsm_stats"]["buckets"])))
        r, _ = self.req("compact_lsm")  # empty L0
        self.assertEqual(r.status, 429)
        self.assertEqual(self.ctl("tables/events")[1]["passes_completed"], 2)

    # ---- write spec routes -----------------------------------------------

    def spec_req(self, route, spec=None, table="nolsm"):
        r, data = self.req(route, table, None if spec is None else json.dumps(spec))
        return r.status, (json.loads(data) if data else None)

    def test_write_spec_set_get_unset(self):
        self.ctl("tables", {"name": "nolsm", "lsm": False,
                            "indexes": ["vec_idx", "txt_idx"]})
        self.assertEqual(self.spec_req("get_lsm_write_spec"),
                         (200, {"lsm_write_spec": None}))
        self.assertEqual(self.stats("nolsm"), {"lsm_stats": None})
        self.assertEqual(self.req("flush_lsm", "nolsm")[0].status, 400)
        spec = {"sharding": {"mode": "bucket", "column": "id", "num_buckets": 3},
                "maintained_indexes": None,
                "writer_config_defaults": {"max_memtable_rows": "1000"}}
        self.assertEqual(self.spec_req("set_lsm_write_spec", spec), (200, None))
        got = dict(spec, maintained_indexes=["vec_idx", "txt_idx"])
        self.assertEqual(self.spec_req("get_lsm_write_spec"),
                         (200, {"lsm_write_spec": got}))
        buckets = self.stats("nolsm")["lsm_stats"]["buckets"]
        self.assertEqual([b["shard_id"] for b in buckets], ["b0", "b1", "b2"])
        self.assertEqual(buckets[0]["memtables"][0]["indexes"],
                         ["vec_idx", "txt_idx"])
        self.assertEqual(self.req("flush_lsm", "nolsm")[0].status, 202)
        st = self.ctl("tables/nolsm")[1]
        self.assertEqual((st["lsm"], st["spec"]), (True, got))
        # a second set is refused: unset first
        self.assertEqual(self.spec_req("set_lsm_write_spec", spec)[0], 400)
        self.assertEqual(self.spec_req("unset_lsm_write_spec"), (200, None))
        self.assertEqual(self.stats("nolsm"), {"lsm_stats": None})
        self.assertEqual(self.req("flush_lsm", "nolsm")[0].status, 400)
        self.assertEqual(self.ctl("tables/nolsm")[1]["spec"], None)
        status, body = self.spec_req("unset_lsm_write_spec")
        self.assertEqual((status, body["code"]), (400, 10))
        self.assertEqual(self.emu.counts("nolsm")["set_lsm_write_spec"], 2)
        self.assertEqual(self.emu.counts("nolsm")["unset_lsm_write_spec"], 2)
        self.assertEqual(self.emu.counts("nolsm")["get_lsm_write_spec"], 2)
        self.assertNotIn("set_lsm_write_spec", self.emu.counts("events"))

    def test_write_spec_shards(self):
        self.ctl("tables", {"name": "nolsm", "lsm": False, "indexes": ["a", "b"]})
        self.spec_req("set_lsm_write_spec", {
            "sharding": {"mode": "unsharded"}, "maintained_indexes": [],
            "writer_config_defaults": {}})
        buckets = self.stats("nolsm")["lsm_stats"]["buckets"]
        self.assertEqual([(b["shard_id"], b["memtables"][0]["indexes"])
                          for b in buckets], [("b0", [])])
        self.assertEqual(self.spec_req("get_lsm_write_spec")[1]["lsm_write_spec"]
                         ["maintained_indexes"], [])
        self.spec_req("unset_lsm_write_spec")
        self.spec_req("set_lsm_write_spec", {
            "sharding": {"mode": "identity", "column": "region"},
            "maintained_indexes": ["b"], "writer_config_defaults": {}})
        self.assertEqual(self.stats("nolsm")["lsm_stats"]["buckets"], [])
        for v in ("eu", "us", "eu"):
            self.ctl("tables/nolsm/write", {"rows": 2, "value": v})
        buckets = self.stats("nolsm")["lsm_stats"]["buckets"]
        self.assertEqual([(b["shard_id"], b["memtables"][0]["rows"])
                          for b in buckets], [("region=eu", 4), ("region=us", 2)])

    def test_write_spec_refusals(self):
        self.ctl("tables", {"name": "nolsm", "lsm": False, "primary_key": None})
        ok = {"sharding": {"mode": "identity", "column": "region"},
              "maintained_indexes": None, "writer_config_defaults": {}}
        bad = [
            ({"sharding": {"mode": "hash"}}, "unrecognized sharding mode"),
            ({"sharding": {"mode": "bucket", "column": "id"}}, "exactly the fields"),
            ({"sharding": {"mode": "bucket", "column": "id", "num_buckets": 1025}},
             "num_buckets"),
            ({"sharding": {"mode": "unsharded", "column": "id"}}, "exactly the fields"),
            ({"maintained_indexes": ["a", "a"]}, "twice"),
            ({"maintained_indexes": [""]}, "list of index names"),
            ({"writer_config_defaults": {"a": 1}}, "object of strings"),
            ({"writer_config_defaults": None}, "object of strings"),
        ]
        for change, msg in bad:
            status, body = self.spec_req("set_lsm_write_spec", dict(ok, **change))
            self.assertEqual(status, 400, change)
            self.assertIn(msg, body["error"], change)
        status, body = self.spec_req("set_lsm_write_spec", ok)
        self.assertIn("no unenforced primary key", body["error"])
        self.ctl("tables", {"name": "nolsm", "lsm": False})
        status, body = self.spec_req("set_lsm_write_spec", dict(ok, sharding={
            "mode": "bucket", "column": "region", "num_buckets": 2}))
        self.assertIn("is not the primary key id", body["error"])
        status, body = self.spec_req("set_lsm_write_spec",
                                     dict(ok, maintained_indexes=["nope"]))
        self.assertIn("has no index nope", body["error"])
        self.assertEqual(self.ctl("tables/nolsm")[1]["spec"], None)
        r, data = self.req("set_lsm_write_spec", "nolsm", b"{not json")
        self.assertEqual(r.status, 400)

    def test_write_spec_faults_and_default_spec(self):
        # a table created with the LSM path on reports a bucket spec
        self.assertEqual(self.spec_req("get_lsm_write_spec", table="events")[1],
                         {"lsm_write_spec": {
                             "sharding": {"mode": "bucket", "column": "id",
                                          "num_buckets": 2},
                             "maintained_indexes": ["vec_idx"],
                             "writer_config_defaults": {}}})
        self.ctl("faults", {"table": "events", "route": "unset_lsm_write_spec",
                            "status": 429, "count": 2})
        self.assertEqual(self.spec_req("unset_lsm_write_spec", table="events")[0], 429)
        self.assertEqual(self.spec_req("unset_lsm_write_spec", table="events")[0], 429)
        self.assertIsNotNone(self.ctl("tables/events")[1]["spec"])
        self.assertEqual(self.spec_req("unset_lsm_write_spec", table="events"),
                         (200, None))
        self.ctl("faults", {"table": "events", "route": "get_lsm_write_spec",
                            "mutate": "missing:lsm_write_spec"})
        self.assertEqual(self.spec_req("get_lsm_write_spec", table="events"),
                         (200, {}))
        self.ctl("node", {"draining": True})
        self.assertEqual(self.spec_req("get_lsm_write_spec", table="events")[0], 503)
        self.ctl("node", {"draining": False})
        self.ctl("tables/events/lsm", {"enabled": True})
        self.assertEqual(self.spec_req("get_lsm_write_spec", table="events")[1]
                         ["lsm_write_spec"]["sharding"]["num_buckets"], 1)

    def test_error_statuses(self):
        r, data = self.req("flush_lsm", key=None)
        self.assertEqual((r.status, json.loads(data)["code"]), (401, 2))
        r, data = self.req("flush_lsm", table="nope", key="wrong")
        self.assertEqual(r.status, 401)
        r, data = self.req("flush_lsm", table="nope")
        self.assertEqual((r.status, json.loads(data)["code"]), (404, 3))
        self.ctl("tables/events/dropping", {"dropping": True})
        for route in emu_mod.ROUTES:
            self.assertEqual(self.req(route)[0].status, 409)
        self.ctl("tables/events/dropping", {"dropping": False})
        self.ctl("tables/events/lsm", {"enabled": False})
        self.assertEqual(self.req("flush_lsm")[0].status, 400)
        self.assertEqual(self.req("compact_lsm")[0].status, 400)
        self.assertEqual(self.stats(), {"lsm_stats": None})
        self.ctl("tables/events/lsm", {"enabled": True})
        self.ctl("node", {"draining": True})
        r, data = self.req("get_lsm_stats")
        self.assertEqual((r.status, json.loads(data)),
                         (503, {"code": 19, "error": "node is draining"}))
        self.ctl("node", {"draining": False})
        self.ctl("tables/events/drop", {})
        self.assertEqual(self.req("flush_lsm")[0].status, 404)
        r, data = self.req("flush_lsm", path="/v1/table/other/nonsense/")
        self.assertEqual(r.status, 404)

    def test_restart_claim_and_replay(self):
        self.ctl("tables/events/generations", {"count": 1})
        self.ctl("node", {"restart": True})
        r, data = self.req("compact_lsm")
        self.assertEqual((r.status, json.loads(data)),
                         (421, {"code": 19, "error": "table not claimed"}))
        out = {}

        def flush():
            t0 = time.time()
            out["status"] = self.req("flush_lsm")[0].status
            out["secs"] = time.time() - t0
        th = threading.Thread(target=flush)
        th.start()
        # the flush has claimed the table: its replay has begun
        self.assertTrue(self.wait(lambda: self.ctl("tables/events")[1]["replaying"]))
        r, data = self.req("get_lsm_stats")  # while replaying
        self.assertEqual((r.status, json.loads(data)["code"]), (429, emu_mod.CODE_REPLAYING))
        th.join(5)
        self.assertEqual(out["status"], 202)
        self.assertGreaterEqual(out["secs"], 0.18)
        st = self.ctl("tables/events")[1]
        self.assertTrue(st["claimed"])
        self.assertEqual(st["buckets"][0]["writer_epoch"], 2)
        self.assertEqual(self.req("compact_lsm")[0].status, 202)
        # stats claims too
        self.ctl("tables/events/claim", {"claimed": False})
        t0 = time.time()
        self.stats()
        self.assertGreaterEqual(time.time() - t0, 0.18)

    def test_encoded_id_delimiter_and_log(self):
        self.ctl("tables", {"name": "ns$t/x", "buckets": 1})
        r, _ = self.req(None, path="/v1/table/ns%24t%2Fx/flush_lsm/?delimiter=%24")
        self.assertEqual(r.status, 202)
        self.req(None, path="/v1/table/ns%24t%2Fx/get_lsm_stats/", key="wrong")
        _, log = self.ctl("log?table=ns%24t%2Fx")
        reqs = log["requests"]
        self.assertEqual([(x["route"], x["status"]) for x in reqs],
                         [("flush_lsm", 202), ("get_lsm_stats", 401)])
        self.assertEqual(reqs[0]["path"], "/v1/table/ns%24t%2Fx/flush_lsm/?delimiter=%24")
        self.assertEqual(reqs[0]["query"], "delimiter=%24")
        self.assertEqual(reqs[0]["headers"]["x-api-key"], "***")
        self.assertEqual(reqs[0]["table"], "ns$t/x")
        _, c = self.ctl("counts?table=ns%24t%2Fx")
        self.assertEqual(c, {"flush_lsm": 1, "compact_lsm": 0, "get_lsm_stats": 1,
                             "total": 2, "connections": 2})
        self.ctl("log/reset", {})
        self.assertEqual(self.ctl("log")[1]["requests"], [])

    def test_non_ascii_raw_utf8_and_raw_path(self):
        # shard ids, index names and messages go out as raw UTF-8, as a
        # Rust server writes them; the log keeps the raw request path
        _, ok = self.ctl("tables", {"name": "caf\u00e9", "shard_ids":
                                    ["b\u00fc", "\u6771"],
                                    "indexes": ["\u7d22\u5f15"]})
        self.assertEqual(ok, {"ok": True})
        r, data = self.req(None, path="/v1/table/caf%C3%A9/get_lsm_stats/",
                           body=b"{}")
        self.assertEqual(r.status, 200)
        self.assertIn("\"shard_id\": \"b\u00fc\"".encode(), data)
        self.assertIn("\"\u6771\"".encode(), data)
        self.assertIn("[\"\u7d22\u5f15\"]".encode(), data)
        self.assertNotIn(b"\\u", data)
        r, data = self.req(None, path="/v1/table/caf%E9/get_lsm_stats/",
                           body=b"{}")
        self.assertEqual(r.status, 404)
        self.ctl("faults", {"table": "caf\u00e9", "route": "flush_lsm",
                            "status": 500, "json": {"code": 1, "error":
                                                    "disk \u2014 full"}})
        r, data = self.req(None, path="/v1/table/caf%C3%A9/flush_lsm/")
        self.assertEqual((r.status, data),
                         (500, "{\"code\": 1, \"error\": \"disk \u2014 full\"}".encode()))
        _, log = self.ctl("log")
        self.assertEqual([(x["path"], x["table"]) for x in log["requests"]],
                         [("/v1/table/caf%C3%A9/get_lsm_stats/", "caf\u00e9"),
                          ("/v1/table/caf%E9/get_lsm_stats/", "caf\ufffd"),
                          ("/v1/table/caf%C3%A9/flush_lsm/", "caf\u00e9")])
        st, err = self.ctl("tables", {"name": "x", "shard_ids": ["a", "a"]})
        self.assertEqual((st, err), (400, {"error": "shard_ids must be a list of distinct non-empty strings"}))

    def test_keepalive_one_connection(self):
        c = self.conn()
        for _ in range(3):
            r, _ = self.req("get_lsm_stats", conn=c)
            self.assertEqual(r.status, 200)
        c.close()
        self.assertEqual(self.ctl("counts")[1]["connections"], 1)

    def test_many_concurrent_connections(self):
        self.ctl("latency", {"table": "events", "route": "get_lsm_stats", "ms": 300})
        results = []

        def one():
            try:
                results.append(self.req("get_lsm_stats", conn=None)[0].status)
            except Exception as e:  # noqa: BLE001
                results.append(repr(e))
        ths = [threading.Thread(target=one) for _ in range(220)]
        t0 = time.time()
        for t in ths:
            t.start()
        for t in ths:
            t.join(10)
        self.assertEqual(results, [200] * 220)
        self.assertLess(time.time() - t0, 5)

    # ---- faults ----------------------------------------------------------

    def test_fault_queue_fifo_pass_and_wildcards(self):
        self.ctl("faults", {"table": "*", "route": "*", "status": 503, "count": -1})
        self.ctl("faults", {"table": "events", "route": "flush_lsm", "pass": True})
        self.ctl("faults", {"table": "events", "route": "flush_lsm", "status": 429,
                            "json": {"code": 6, "error": "busy"}, "count": 2})
        self.assertEqual(self.req("flush_lsm")[0].status, 202)
        r, data = self.req("flush_lsm")
        self.assertEqual((r.status, json.loads(data)), (429, {"code": 6, "error": "busy"}))
        self.assertEqual(self.req("flush_lsm")[0].status, 429)
        self.assertEqual(self.req("flush_lsm")[0].status, 503)   # wildcard, forever
        self.assertEqual(self.req("get_lsm_stats", "other")[0].status, 503)
        self.ctl("faults/clear", {})
        self.assertEqual(self.req("flush_lsm")[0].status, 202)
        self.assertEqual(self.ctl("faults", method="DELETE")[0], 200)

    def test_fault_for_ms_ends_by_itself(self):
        self.ctl("faults", {"table": "events", "route": "*", "status": 503, "count": -1,
                            "json": {"code": 19, "error": "node is draining"},
                            "for_ms": 300})
        self.assertEqual(self.ctl("faults", {"for_ms": 0})[0], 400)
        # the clock starts with the first request answered, not the
        # queueing: let more than for_ms pass before that request
        time.sleep(0.4)
        t0 = time.monotonic()
        self.assertEqual(self.req("flush_lsm")[0].status, 503)
        self.assertEqual(self.req("get_lsm_stats", "other")[0].status, 200)
        seen = []
        deadline = t0 + 5
        while time.monotonic() < deadline:
            status = self.req("flush_lsm")[0].status
            seen.append(status)
            if status == 202:
                break
        self.assertEqual(seen[-1], 202)
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)
        self.assertEqual(set(seen[:-1]), {503} if len(seen) > 1 else set())
        self.assertEqual(self.ctl("faults")[1]["faults"], [])

    def test_fault_headers_body_bytes_chunked_redirect(self):
        self.ctl("faults", {"route": "get_lsm_stats", "status": 200,
                            "headers": {"X-Big": "v" * 20000},
                            "raw_header_lines": ["this-line-has-no-colon"],
                            "body_bytes": 300000})
        r, data = self.req("get_lsm_stats")
        self.assertEqual(len(r.getheader("X-Big")), 20000)
        self.assertEqual(len(data), 300000)
        self.ctl("faults", {"route": "get_lsm_stats", "json": {"lsm_stats": None},
                            "chunked": True})
        r, data = self.req("get_lsm_stats")
        self.assertEqual((r.getheader("Transfer-Encoding"), json.loads(data)),
                         ("chunked", {"lsm_stats": None}))
        self.ctl("faults", {"route": "flush_lsm", "action": "redirect",
                            "location": "http://example.invalid/"})
        r, _ = self.req("flush_lsm")
        self.assertEqual((r.status, r.getheader("Location")), (302, "http://example.invalid/"))

    def test_fault_pad_to(self):
        for n in (1000, 1001, 65537):
            self.ctl("faults", {"route": "flush_lsm", "status": 500, "pad_to": n,
                                "json": {"code": 20, "error": "big"}})
            r, data = self.req("flush_lsm")
            doc = json.loads(data)
            self.assertEqual((r.status, len(data), doc["code"], doc["error"],
                              set(doc["pad"])), (500, n, 20, "big", {0}))

    def test_fault_mutate_real_answer(self):
        self.ctl("tables/events/write", {"rows": 2})
        self.ctl("faults", {"route": "flush_lsm", "mutate": "not_json"})
        r, data = self.req("flush_lsm")
        self.assertEqual((r.status, data), (202, b"this is not json {"))
        self.assertEqual(len(self.stats()["lsm_stats"]["buckets"][0]["generations"]), 1)
        self.ctl("faults", {"route": "get_lsm_stats",
                            "mutate": "missing:lsm_stats.buckets.0.writer_epoch"})
        r, data = self.req("get_lsm_stats")
        self.assertNotIn("writer_epoch", json.loads(data)["lsm_stats"]["buckets"][0])
        self.assertIn("writer_epoch", json.loads(data)["lsm_stats"]["buckets"][1])
        self.ctl("faults", {"route": "get_lsm_stats", "mutate": "html", "status": 502})
        r, data = self.req("get_lsm_stats")
        self.assertEqual((r.status, r.getheader("Content-Type")), (502, "text/html"))

    def test_drip_then_next_request_on_the_same_connection(self):
        # a kept-alive client sends its next request the moment the dripped
        # answer ends: the drip must leave it to be read and answered
        self.ctl("faults", {"route": "flush_lsm", "action": "drip",
                            "body": "{}  ", "drip_bytes_per_sec": 20})
        c = self.conn()
        r, data = self.req("flush_lsm", conn=c)
        self.assertEqual((r.status, data), (200, b"{}  "))
        r, data = self.req("flush_lsm", table="other", conn=c)
        self.assertEqual(r.status, 202)
        c.close()
        _, log = self.ctl("log?route=flush_lsm")
        self.assertEqual([e["table"] for e in log["requests"]], ["events", "other"])

    def test_fault_connection_actions(self):
        self.ctl("faults", {"route": "flush_lsm", "action": "close_before_headers"})
        with self.assertRaises((http.client.HTTPException, ConnectionError)):
            self.req("flush_lsm")
        self.ctl("faults", {"route": "flush_lsm", "action": "reset"})
        with self.assertRaises((http.client.HTTPException, ConnectionError)):
            self.req("flush_lsm")
        self.ctl("faults", {"route": "get_lsm_stats", "action": "close_mid_body"})
        with self.assertRaises(http.client.IncompleteRead):
            self.req("get_lsm_stats")
        self.ctl("faults", {"route": "get_lsm_stats", "action": "drip",
                            "json": {"lsm_stats": None}, "drip_bytes_per_sec": 100})
        t0 = time.time()
        r, data = self.req("get_lsm_stats")
        self.assertEqual(json.loads(data), {"lsm_stats": None})
        self.assertGreater(time.time() - t0, 0.12)
        self.ctl("faults", {"route": "get_lsm_stats", "action": "endless"})
        c = self.conn()
        c.request("POST", "/v1/table/events/get_lsm_stats/", headers={"x-api-key": KEY})
        r = c.getresponse()
        self.assertGreater(len(r.read(200000)), 100000)
        c.close()
        _, log = self.ctl("log?route=get_lsm_stats")
        self.assertEqual(log["requests"][-1]["status"], 200)

    def test_hang_does_not_block_others_and_ends(self):
        self.ctl("faults", {"table": "events", "route": "flush_lsm", "action": "hang"})
        c = self.conn(timeout=0.3)
        c.request("POST", "/v1/table/events/flush_lsm/", headers={"x-api-key": KEY})
        t0 = time.time()
        self.assertEqual(self.req("get_lsm_stats", "other")[0].status, 200)
        # a blocked one would never answer (the read times out at 5 s)
        self.assertLess(time.time() - t0, 4.0)
        with self.assertRaises(socket.timeout):
            c.getresponse()
        c.close()
        # the hung thread finishes once it sees the client gone
        self.assertTrue(self.wait(
            lambda: "ms" in self.ctl("log?route=flush_lsm")[1]["requests"][0]))
        _, log = self.ctl("log?route=flush_lsm")
        self.assertEqual(log["requests"][0]["status"], 0)

    def test_stats_keys_renamed_spelling(self):
        self.ctl("tables/events/generations", {"count": 1, "rows": 3})
        old = self.stats(rows=True)["lsm_stats"]["buckets"]
        status, conf = self.ctl("stats_keys", {"keys": "sstables"})
        self.assertEqual((status, conf), (200, {"ok": True, "keys": "sstables"}))
        # the old flag is an unrecognized member now: no rows
        new = self.stats(rows=True)["lsm_stats"]
        self.assertEqual(list(new), ["table_shards"])
        self.assertNotIn("generations", new["table_shards"][0])
        self.assertEqual(new["table_shards"][0]["sstables"],
                         [{"generation": 1, "bytes": 192}])
        r, data = self.req("get_lsm_stats", "events",
                           json.dumps({"include_sstable_rows": True}))
        shards = json.loads(data)["lsm_stats"]["table_shards"]
        self.assertEqual([b["sstables"] for b in shards],
                         [b["generations"] for b in old])
        self.assertEqual(shards[0]["sstables"][0]["rows"], 3)
        r, data = self.req("get_lsm_stats", "events",
                           json.dumps({"include_sstable_rows": 1}))
        self.assertEqual((r.status, json.loads(data)["error"]),
                         (400, "include_sstable_rows must be a boolean"))
        status, err = self.ctl("stats_keys", {"keys": "buckets"})
        self.assertEqual((status, err["error"]),
                         (400, "keys must be one of generations, sstables"))
        self.ctl("reset", {})
        self.assertEqual(self.ctl("stats_keys")[1]["keys"], "generations")

    def test_hang_max_ms_closes_by_itself(self):
        self.ctl("faults", {"table": "events", "route": "flush_lsm",
                            "action": "hang", "max_ms": 300})
        c = self.conn(timeout=5)
        t0 = time.time()
        c.request("POST", "/v1/table/events/flush_lsm/", headers={"x-api-key": KEY})
        with self.assertRaises(http.client.RemoteDisconnected):
            c.getresponse()
        elapsed = time.time() - t0
        c.close()
        self.assertGreaterEqual(elapsed, 0.3)
        self.assertLess(elapsed, 4.0)   # never closed: the read times out at 5 s
        status, _ = self.ctl("faults", {"action": "hang", "max_ms": 0})
        self.assertEqual(status, 400)

    def test_latency_and_reset(self):
        self.ctl("latency", {"table": "*", "route": "flush_lsm", "ms": 1000})
        t0 = time.time()
        self.req("flush_lsm")
        self.assertGreater(time.time() - t0, 0.98)
        self.ctl("tables", {"name": "extra", "buckets": 3})
        self.ctl("pool", {"size": 7, "saturated": True})
        self.ctl("config", {"pass_ms": 9, "prefix_max": 3, "seal_rows": 5})
        self.ctl("node", {"draining": True})
        self.assertEqual(self.ctl("reset", {})[1], {"ok": True})
        t0 = time.time()
        self.assertEqual(self.req("flush_lsm")[0].status, 202)
        self.assertLess(time.time() - t0, 0.9)   # the 1 s latency is gone
        self.assertEqual(self.ctl("tables")[1]["tables"], ["events", "other"])
        self.assertEqual(self.ctl("pool")[1]["size"], 2)
        self.assertFalse(self.ctl("pool")[1]["saturated"])
        cfg = self.ctl("config")[1]
        self.assertEqual((cfg["pass_ms"], cfg["prefix_max"], cfg["seal_rows"]), (50, 1, 1000))
        self.assertEqual(len(self.ctl("log")[1]["requests"]), 1)

    def test_manual_writers_clock(self):
        """writers clock manual: no rows until advance, then a minute's
        worth; reset brings the real clock back; bad input is a 400."""
        self.assertEqual(self.ctl("writers")[1], {"ok": True, "clock": "real"})
        self.assertEqual(self.ctl("writers", {"clock": "manual"})[1]["clock"], "manual")
        self.ctl("tables/events/writer", {"rows_per_second": 20})
        time.sleep(0.2)
        state = self.ctl("tables/events")[1]
        self.assertEqual([b["wal_entry_position_last_seen"] for b in state["buckets"]], [0, 0])
        self.assertEqual(self.ctl("advance", {"seconds": 60, "tick_ms": 1000})[1], {"ok": True})
        state = self.ctl("tables/events")[1]
        self.assertEqual([b["wal_entry_position_last_seen"] for b in state["buckets"]], [60, 60])
        self.assertEqual([len(b["generations"]) for b in state["buckets"]], [0, 0])
        self.assertEqual([b["memtables"][-1]["rows"] for b in state["buckets"]], [600, 600])
        self.assertEqual(self.ctl("writers", {"clock": "slow"})[0], 400)
        self.assertEqual(self.ctl("advance", {"seconds": -1})[0], 400)
        self.assertEqual(self.ctl("advance", {"seconds": 1, "tick_ms": 0})[0], 400)
        self.ctl("reset", {})
        self.assertEqual(self.ctl("writers")[1]["clock"], "real")

    def test_rtt_delays_every_route_request_and_overlaps(self):
        """config rtt_ms: each route request (a 401 too) answered no sooner
        than the round trip; 6 requests on 6
        connections are all held in the round trip at the same time."""
        self.assertEqual(self.ctl("config", {"rtt_ms": 400})[1]["rtt_ms"], 400)
        t0 = time.monotonic()
        r, _ = self.req("get_lsm_stats", body="{}")
        self.assertEqual(r.status, 200)
        self.assertGreaterEqual(time.monotonic() - t0, 0.4)
        t0 = time.monotonic()
        self.assertEqual(self.req("get_lsm_stats", key="wrong")[0].status, 401)
        self.assertGreaterEqual(time.monotonic() - t0, 0.4)
        self.ctl("log/reset", {})
        elapsed = []

        def one():
            s = time.monotonic()
            status = self.req("get_lsm_stats", body="{}", conn=None)[0].status
            elapsed.append((status, time.monotonic() - s))
        ths = [threading.Thread(target=one) for _ in range(6)]
        for t in ths:
            t.start()
        # all six read and none answered yet: they overlap in the round trip
        self.assertTrue(self.wait(lambda: [e["status"] for e in
                                           self.ctl("log")[1]["requests"]]
                                  == [0] * 6, timeout=10))
        for t in ths:
            t.join(10)
        self.assertEqual(sorted(s for s, _ in elapsed), [200] * 6)
        self.assertTrue(all(e >= 0.4 for _, e in elapsed), elapsed)
        self.assertEqual(self.ctl("reset", {})[1], {"ok": True})
        self.assertEqual(self.ctl("config")[1]["rtt_ms"], 0)
        self.assertEqual(self.ctl("config", {"rtt_ms": -1})[0], 400)

    def test_rtt_from_the_command_line_survives_reset(self):
        e = emu_mod.Emulator(KEY, [("t", 1, 0)], rtt_ms=300, quiet=True)
        port = e.start()
        try:
            e.reset()
            self.assertEqual(e.rtt_ms, 300)
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            t0 = time.monotonic()
            c.request("POST", "/v1/table/t/get_lsm_stats/", body=b"{}",
                      headers={"x-api-key": KEY})
            r = c.getresponse()
            r.read()
            c.close()
            self.assertEqual(r.status, 200)
            self.assertGreaterEqual(time.monotonic() - t0, 0.3)
        finally:
            e.stop()

    def test_counts_per_table(self):
        self.ctl("log/reset", {})
        self.stats()
        self.stats()
        self.req("flush_lsm", table="other")
        self.req("get_lsm_write_spec", table="other", body="{}")
        self.assertEqual(self.ctl("counts/tables")[1], {"tables": {
            "events": {"flush_lsm": 0, "compact_lsm": 0, "get_lsm_stats": 2},
            "other": {"flush_lsm": 1, "compact_lsm": 0, "get_lsm_stats": 0,
                      "get_lsm_write_spec": 1}}})

    def test_sealed_buckets_are_compacted_like_any(self):
        self.ctl("tables/events/generations", {"count": 2, "rows": 3})
        self.ctl("tables/events/bucket", {"bucket": "b0", "status": "Sealed"})
        self.ctl("tables/events/bucket", {"bucket": "b1", "status": "SEALED"})
        s = self.stats()["lsm_stats"]["buckets"]
        self.assertEqual([b["status"] for b in s], ["Sealed", "SEALED"])
        self.assertEqual(["memtables" in b for b in s], [False, False])
        self.assertEqual(self.req("compact_lsm")[0].status, 202)
        self.assertEqual([b["compacting"] for b in self.stats()["lsm_stats"]["buckets"]],
                         [True, True])
        self.assertTrue(self.wait(lambda: [len(b["generations"]) for b in
                                           self.stats()["lsm_stats"]["buckets"]] == [1, 1]))
        self.assertEqual(self.ctl("tables/events/bucket",
                                  {"bucket": "b0", "status": ""})[0], 400)
        self.ctl("tables/events/bucket", {"bucket": "b0", "status": "ACTIVE"})
        self.ctl("tables/events/write", {"rows": 4, "bucket": "b0"})
        self.assertEqual(self.stats()["lsm_stats"]["buckets"][0]["memtables"][0]["rows"], 4)

    def test_behaviour_stale_reads_stall_then_drain(self):
        # two generations; passes end with them listed until 5 stats reads
        # have been answered, then both leave the list at once
        self.ctl("tables/events/generations", {"count": 2, "buckets": ["b0"]})
        self.assertEqual(self.ctl("behaviour", {"stale_reads": 5})[1]["stale_reads"], 5)
        for passes in (1, 2, 3):
            self.assertEqual(self.req("compact_lsm")[0].status, 202)
            self.assertTrue(self.wait(
                lambda: self.ctl("tables/events")[1]["passes_completed"] == passes))
        # a third pass merges nothing more than the two listed generations
        self.assertEqual(len(self.ctl("tables/events")[1]["buckets"][0]["generations"]), 2)
        seen = []
        for _ in range(5):
            b0 = self.stats()["lsm_stats"]["buckets"][0]
            seen.append((len(b0["generations"]), b0["compacting"]))
        # the answer of the fifth read still lists them; the read uses N up
        self.assertEqual(seen, [(2, False)] * 5)
        self.assertEqual(self.ctl("behaviour")[1]["stale_reads"], 0)
        b0 = self.stats()["lsm_stats"]["buckets"][0]
        self.assertEqual(len(b0["generations"]), 0)
        # off: a pass drains at once again
        self.ctl("tables/events/generations", {"count": 1, "buckets": ["b0"]})
        self.assertEqual(self.req("compact_lsm")[0].status, 202)
        self.assertTrue(self.wait(
            lambda: not self.stats()["lsm_stats"]["buckets"][0]["generations"]))
        self.assertEqual(self.ctl("behaviour", {"stale_reads": -1})[0], 400)
        self.assertEqual(self.ctl("behaviour", {"stale_reads": True})[0], 400)
        self.ctl("behaviour", {"stale_reads": 3})
        self.ctl("reset", {})
        self.assertEqual(self.ctl("behaviour")[1]["stale_reads"], 0)

    def test_behaviour_keep_compacted_and_idle_compact_status(self):
        self.assertEqual(self.ctl("behaviour"),
                         (200, {"ok": True, "keep_compacted": False,
                                "stale_reads": 0,
                                "idle_compact_status": 429}))
        self.ctl("tables/events/generations", {"count": 1, "buckets": ["b0"]})
        self.ctl("behaviour", {"keep_compacted": True})
        self.assertEqual(self.req("compact_lsm")[0].status, 202)
        self.assertTrue(self.wait(
            lambda: self.ctl("tables/events")[1]["passes_completed"] == 1))
        b0 = self.stats()["lsm_stats"]["buckets"][0]
        self.assertEqual((len(b0["generations"]), b0["compacting"]), (1, False))
        self.ctl("behaviour", {"keep_compacted": False, "idle_compact_status": 202})
        self.ctl("tables/events/latch", {"bucket": "b0", "held": True})
        self.assertEqual(self.req("compact_lsm")[0].status, 429)  # a latch held
        self.ctl("tables/events/latch", {"bucket": "b0", "held": False})
        self.assertEqual(self.req("compact_lsm")[0].status, 202)
        self.assertTrue(self.wait(lambda: not self.stats()["lsm_stats"]["buckets"][0]["generations"]))
        r, data = self.req("compact_lsm")   # nothing to do: 202, empty
        self.assertEqual((r.status, data), (202, b""))
        self.assertEqual(self.ctl("behaviour", {"idle_compact_status": 200})[0], 400)
        self.assertEqual(self.ctl("behaviour", {"keep_compacted": "yes"})[0], 400)
        self.ctl("reset", {})
        self.assertEqual(self.ctl("behaviour")[1]["idle_compact_status"], 429)

    def test_draining_ms_ends_by_itself(self):
        self.ctl("node", {"draining": True, "draining_ms": 300})
        r, data = self.req("flush_lsm")
        self.assertEqual((r.status, json.loads(data)["code"]), (503, 19))
        self.assertTrue(self.wait(lambda: self.req("flush_lsm")[0].status == 202))
        self.ctl("node", {"draining": True})     # untimed: until cleared
        time.sleep(0.4)
        self.assertEqual(self.req("flush_lsm")[0].status, 503)
        self.ctl("node", {"draining": False})

    def test_mutate_null(self):
        self.ctl("faults", {"route": "get_lsm_stats",
                            "mutate": "null:lsm_stats.buckets.0.memtables"})
        b = self.stats()["lsm_stats"]["buckets"]
        self.assertEqual((b[0]["memtables"], isinstance(b[1]["memtables"], list)),
                         (None, True))

    def test_latch_pin_and_control_errors(self):
        self.ctl("tables/events/generations", {"count": 2, "buckets": ["b0"]})
        self.ctl("tables/events/latch", {"bucket": "b0", "held": True})
        b0 = self.stats()["lsm_stats"]["buckets"][0]
        self.assertTrue(b0["compacting"])
        self.assertEqual(self.req("compact_lsm")[0].status, 429)
        self.ctl("tables/events/latch", {"bucket": "b0", "held": False})
        self.assertEqual(self.req("compact_lsm")[0].status, 202)
        self.assertTrue(self.wait(
            lambda: len(self.ctl("tables/events")[1]["buckets"][0]["generations"]) == 1))
        self.assertEqual(self.ctl("tables/events/latch", {"bucket": "zz", "held": True})[0], 400)
        self.assertEqual(self.ctl("tables/none/write", {"rows": 1})[0], 404)
        self.assertEqual(self.ctl("faults", {"action": "explode"})[0], 400)
        self.assertEqual(self.ctl("pool", {"size": "x"})[0], 400)
        st, body = self.ctl("tables", {"name": 5})
        self.assertEqual(st, 400)
        self.assertIn("error", body)


    # ---- versions and lagging read replicas -----------------------------

    def version_of(self, r):
        v = r.getheader("x-lancedb-version")
        return None if v is None else int(v)

    def test_version_rises_on_every_state_change(self):
        v0 = self.ctl("tables/events")[1]["version"]
        r, _ = self.req("get_lsm_stats", body=b"{}")
        self.assertEqual(self.version_of(r), v0)       # a read changes nothing
        self.ctl("tables/events/write", {"rows": 4})   # two batches: two
        r, _ = self.req("flush_lsm")                   # a seal: one more
        self.assertEqual((r.status, self.version_of(r)), (202, v0 + 3))
        r, _ = self.req("flush_lsm")                   # nothing to seal
        self.assertEqual(self.version_of(r), v0 + 3)
        r, _ = self.req("compact_lsm")                 # latches: one more
        self.assertEqual(self.version_of(r), v0 + 4)
        self.assertTrue(self.wait(                     # the passes end: two
            lambda: self.ctl("tables/events")[1]["version"] == v0 + 6))
        r, _ = self.req("compact_lsm")                 # 429: no header
        self.assertEqual((r.status, self.version_of(r)), (429, None))
        r, data = self.req("describe", path="/v1/table/events/describe/")
        self.assertEqual(json.loads(data)["version"], v0 + 6)
        log = self.ctl("log?table=events&route=flush_lsm")[1]["requests"]
        self.assertEqual([e["version"] for e in log], [v0 + 3, v0 + 3])

    def test_no_version_header_per_route(self):
        self.assertEqual(self.ctl("freshness", {"no_version_header": ["flush_lsm"]})
                         [1]["no_version_header"], ["flush_lsm"])
        r, _ = self.req("flush_lsm")
        self.assertEqual((r.status, self.version_of(r)), (202, None))
        r, _ = self.req("get_lsm_stats", body=b"{}")
        self.assertIsNotNone(self.version_of(r))
        self.ctl("freshness", {"no_version_header": ["*"]})
        r, _ = self.req("get_lsm_stats", body=b"{}")
        self.assertIsNone(self.version_of(r))
        self.assertEqual(self.ctl("freshness", {"no_version_header": ["x"]})[0], 400)
        self.ctl("reset", {})
        self.assertEqual(self.ctl("freshness")[1]["no_version_header"], [])

    def test_lagging_replica_serves_the_past_until_a_header_asks(self):
        self.assertEqual(self.ctl("freshness", {"lag_ms": 400, "table": "events"})
                         [1]["tables"], {"events": 400})
        self.ctl("tables/events/write", {"rows": 2, "bucket": "b0"})
        r, _ = self.req("flush_lsm")
        flushed = self.version_of(r)
        # the replica still has the state of before the write and the seal
        r, data = self.req("get_lsm_stats", body=b"{}")
        self.assertEqual(self.version_of(r), flushed - 2)
        self.assertEqual(json.loads(data)["lsm_stats"]["buckets"][0]["generations"], [])
        # the other table has no lag
        self.assertEqual(self.ctl("freshness")[1]["lag_ms"], 0)
        # a read that carries the flush's version makes it load the primary
        r, data = self.req("get_lsm_stats", body=b"{}",
                           extra={"x-lancedb-min-read-version": str(flushed)})
        self.assertEqual(self.version_of(r), flushed)
        self.assertEqual([g["generation"] for g in json.loads(data)
                          ["lsm_stats"]["buckets"][0]["generations"]], [1])
        self.assertEqual(self.ctl("freshness")[1]["refreshes"], 1)
        # what it loaded stays: a read without the header sees it too
        r, _ = self.req("get_lsm_stats", body=b"{}")
        self.assertEqual(self.version_of(r), flushed)
        # a version it has already, or one that does not parse: no load
        for v in (str(flushed), "0", "abc", "-3"):
            self.req("get_lsm_stats", body=b"{}",
                     extra={"x-lancedb-min-read-version": v})
        self.assertEqual(self.ctl("freshness")[1]["refreshes"], 1)
        log = self.ctl("log?table=events&route=get_lsm_stats")[1]["requests"]
        self.assertEqual([e["headers"].get("x-lancedb-min-read-version")
                          for e in log],
                         [None, str(flushed), None, str(flushed), "0", "abc", "-3"])
        # the write spec is read from the replica too
        self.ctl("tables/events/lsm", {"enabled": False})
        r, data = self.req("get_lsm_write_spec", body=b"")
        self.assertIsNotNone(json.loads(data)["lsm_write_spec"])
        r, data = self.req("get_lsm_write_spec", body=b"", extra={
            "x-lancedb-min-timestamp": time.strftime(
                "%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() + 1))})
        self.assertIsNone(json.loads(data)["lsm_write_spec"])
        # the replica catches up by itself once the lag has passed
        self.ctl("tables/events/lsm", {"enabled": True})
        want = self.ctl("tables/events")[1]["version"]
        self.assertTrue(self.wait(lambda: self.version_of(
            self.req("get_lsm_stats", body=b"{}")[0]) == want))

    def test_min_timestamp_older_than_the_replica_loads_nothing(self):
        self.ctl("freshness", {"lag_ms": 200})
        self.ctl("tables/events/write", {"rows": 1})
        old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
        r, _ = self.req("get_lsm_stats", body=b"{}",
                        extra={"x-lancedb-min-timestamp": old})
        self.assertEqual(self.ctl("freshness")[1]["refreshes"], 0)
        r, _ = self.req("get_lsm_stats", body=b"{}",
                        extra={"x-lancedb-min-timestamp": "not a time"})
        self.assertEqual(self.ctl("freshness")[1]["refreshes"], 0)

    def test_read_ahead_of_the_table_refused_when_asked(self):
        v = self.ctl("tables/events")[1]["version"]
        # by default the primary serves what it has
        r, _ = self.req("get_lsm_stats", body=b"{}",
                        extra={"x-lancedb-min-read-version": str(v + 10)})
        self.assertEqual((r.status, self.version_of(r)), (200, v))
        self.ctl("freshness", {"ahead_status": 412})
        r, data = self.req("get_lsm_stats", body=b"{}",
                           extra={"x-lancedb-min-read-version": str(v + 10)})
        self.assertEqual((r.status, json.loads(data)["code"]), (412, 21))
        r, _ = self.req("get_lsm_write_spec", body=b"",
                        extra={"x-lancedb-min-read-version": str(v + 10)})
        self.assertEqual(r.status, 412)
        # writes are not reads: a flush is served
        r, _ = self.req("flush_lsm", extra={"x-lancedb-min-read-version": str(v + 10)})
        self.assertEqual(r.status, 202)
        self.assertEqual(self.ctl("freshness", {"ahead_status": 200})[0], 400)
        self.ctl("reset", {})
        self.assertEqual(self.ctl("freshness")[1]["ahead_status"], 0)


class TransportAdditionsTest(unittest.TestCase):
    """large, close_mid_body rst, close_idle, IPv6 / dual-stack, TLS."""

    def start(self, **kw):
        e = emu_mod.Emulator(KEY, [("events", 1, 0)], quiet=True, **kw)
        port = e.start()
        self.addCleanup(e.stop)
        return e, port

    def ctl(self, port, path, body=None, host="127.0.0.1"):
        c = http.client.HTTPConnection(host, port, timeout=5)
        c.request("POST" if body is not None else "GET", "/_emulator/" + path,
                  body=None if body is None else json.dumps(body))
        r = c.getresponse()
        data = json.loads(r.read() or b"null")
        c.close()
        return r.status, data

    def test_large_streams_content_length(self):
        _, port = self.start()
        self.ctl(port, "faults", {"route": "get_lsm_stats", "action": "large",
                                  "length": 3000000})
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("POST", "/v1/table/events/get_lsm_stats/", headers={"x-api-key": KEY})
        r = c.getresponse()
        self.assertEqual(r.getheader("Content-Length"), "3000000")
        data = r.read()
        self.assertEqual(len(data), 3000000)
        self.assertTrue(data.startswith(b'{"lsm_stats"'))
        c.close()
        # the default is 512 MiB, announced but only sent while read
        self.ctl(port, "faults", {"route": "get_lsm_stats", "action": "large"})
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("POST", "/v1/table/events/get_lsm_stats/", headers={"x-api-key": KEY})
        r = c.getresponse()
        self.assertEqual(int(r.getheader("Content-Length")), 512 * 1024 * 1024)
        self.assertEqual(len(r.read(100000)), 100000)
        c.close()

    def test_close_mid_body_rst(self):
        _, port = self.start()
        self.ctl(port, "faults", {"route": "get_lsm_stats",
                                  "action": "close_mid_body", "rst": True})
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("POST", "/v1/table/events/get_lsm_stats/", headers={"x-api-key": KEY})
        with self.assertRaises((http.client.HTTPException, ConnectionError)):
            c.getresponse().read()
        c.close()

    def test_close_idle_connections(self):
        _, port = self.start()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("POST", "/v1/table/events/get_lsm_stats/", headers={"x-api-key": KEY})
        self.assertEqual(c.getresponse().read()[:12], b'{"lsm_stats"')
        status, data = self.ctl(port, "connections/close_idle", {})
        self.assertEqual((status, data), (200, {"ok": True, "closed": 1}))
        # the server closed it: the FIN arrives (recv waits for it, 5 s at most)
        self.assertEqual(c.sock.recv(10), b"")
        c.close()
        self.assertEqual(self.ctl(port, "connections/close_idle", {})[1]["closed"], 0)

    def test_close_idle_waits_for_an_answer_in_flight(self):
        # a connection still answering when the close is asked for is
        # closed once its answer is out, whole; one that stays busy past
        # the settle time is left alone
        _, port = self.start()
        self.ctl(port, "latency", {"table": "events", "route": "get_lsm_stats",
                                   "ms": 200})
        self.ctl(port, "faults", {"route": "flush_lsm", "action": "hang",
                                  "max_ms": 3000})
        slow = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        hung = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        hung.request("POST", "/v1/table/events/flush_lsm/",
                     headers={"x-api-key": KEY})
        slow.request("POST", "/v1/table/events/get_lsm_stats/",
                     headers={"x-api-key": KEY})
        # both requests are in flight: the emulator logged them
        until = time.monotonic() + 5
        while len(self.ctl(port, "log")[1]["requests"]) < 2 and \
                time.monotonic() < until:
            time.sleep(0.01)
        self.assertEqual(len(self.ctl(port, "log")[1]["requests"]), 2)
        t0 = time.monotonic()
        status, data = self.ctl(port, "connections/close_idle", {})
        waited = time.monotonic() - t0
        self.assertEqual((status, data), (200, {"ok": True, "closed": 1}))
        self.assertGreaterEqual(waited, 0.5)
        self.assertLess(waited, 2.0)
        body = slow.getresponse().read()
        self.assertTrue(body.startswith(b'{"lsm_stats"'))
        json.loads(body)                          # whole
        self.assertEqual(slow.sock.recv(10), b"")  # then closed
        slow.close()
        hung.close()

    def test_ipv6_and_dual_stack(self):
        if not socket.has_ipv6:
            self.skipTest("no IPv6")
        _, port = self.start(host="::1")
        self.assertEqual(self.ctl(port, "counts", host="::1")[0], 200)
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        _, port = self.start(host="::")
        for host in ("::1", "127.0.0.1"):
            self.assertEqual(self.ctl(port, "counts", host=host)[0], 200)

    def test_tls_and_client_certificates(self):
        import ssl
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", d]))

        def openssl(*args):
            subprocess.run(["openssl"] + list(args), check=True,
                           capture_output=True, cwd=d)
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=ca", "-keyout", "ca.key", "-out", "ca.crt")
        with open(os.path.join(d, "san"), "w") as fh:
            fh.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        for who in ("server", "client"):
            openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + who,
                    "-keyout", who + ".key", "-out", who + ".csr")
            openssl("x509", "-req", "-days", "1", "-in", who + ".csr",
                    "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", who + ".crt", *(["-extfile", "san"] if who == "server" else []))
        p = lambda f: os.path.join(d, f)  # noqa: E731
        _, port = self.start(ssl_context=emu_mod.make_ssl_context(
            p("server.crt"), p("server.key"), p("ca.crt")))
        ctx = ssl.create_default_context(cafile=p("ca.crt"))
        # untrusted: refused by the client
        with self.assertRaises(ssl.SSLError):
            c = http.client.HTTPSConnection("127.0.0.1", port, timeout=5,
                                            context=ssl.create_default_context())
            c.request("GET", "/_emulator/counts")
        # no client certificate: refused by the server
        with self.assertRaises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
            c = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=ctx)
            c.request("GET", "/_emulator/counts")
            c.getresponse().read()
        ctx.load_cert_chain(p("client.crt"), p("client.key"))
        c = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=ctx)
        c.request("POST", "/v1/table/events/flush_lsm/", headers={"x-api-key": KEY})
        self.assertEqual(c.getresponse().status, 202)
        c.close()
        # a plain-HTTP client costs only its own connection
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
        s.close()
        c = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=ctx)
        c.request("POST", "/v1/table/events/flush_lsm/", headers={"x-api-key": KEY})
        self.assertEqual(c.getresponse().status, 202)
        c.close()


class StartCommandTest(unittest.TestCase):
    def test_start_command_listens_fast_and_stops_on_sigterm(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lsm_emulator.py")
        with tempfile.TemporaryDirectory() as d:
            pf = os.path.join(d, "port")
            t0 = time.time()
            p = subprocess.Popen([sys.executable, script, "--port", "0", "--port-file", pf,
                                  "--api-key", "k", "--table", "events:4:100"],
                                 stderr=subprocess.PIPE)
            try:
                while not os.path.exists(pf) and time.time() - t0 < 5:
                    time.sleep(0.01)
                with open(pf) as fh:
                    port = int(fh.read())
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("POST", "/v1/table/events/get_lsm_stats/", body="{}",
                          headers={"x-api-key": "k"})
                r = c.getresponse()
                s = json.loads(r.read())
                # fast enough for the TAP helpers, which wait 10 s for the
                # port file (an interpreter's start took 1.8 s under load)
                self.assertLess(time.time() - t0, 5.0)
                self.assertEqual(len(s["lsm_stats"]["buckets"]), 4)
                c.close()
            finally:
                p.send_signal(signal.SIGTERM)
                p.wait(5)
            err = p.stderr.read().decode()
            p.stderr.close()
            self.assertIn("/v1/table/events/get_lsm_stats/", err)
            self.assertEqual(p.returncode, 0)

    def test_max_lifetime_exits_by_itself(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lsm_emulator.py")
        t0 = time.time()
        p = subprocess.Popen([sys.executable, script, "--port", "0", "--quiet",
                              "--api-key", "k", "--max-lifetime", "0.5"],
                             stderr=subprocess.DEVNULL)
        try:
            self.assertEqual(p.wait(10), 0)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertGreaterEqual(time.time() - t0, 0.5)


class StateFileTest(unittest.TestCase):
    """--state-file: the durable state survives kill -9; the node comes
    back replaying (429), then unclaimed (421) until a flush claims."""

    # HttpTest's helpers, without running its tests a second time
    conn, req, ctl, wait = HttpTest.conn, HttpTest.req, HttpTest.ctl, HttpTest.wait

    def setUp(self):
        HttpTest.setUp(self)
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "state.json")
        self.emu.state_file = emu_mod.StateFile(self.emu, self.path)

    def tearDown(self):
        HttpTest.tearDown(self)
        self.tmp.cleanup()

    def restarted(self, replay_ms):
        """A second node on the same file, as after a crash."""
        self.emu.state_file.write()
        self.emu.stop()
        self.emu = emu_mod.Emulator(KEY, [("events", 1, 0)], pass_ms=50,
                                    replay_ms=50, quiet=True)
        self.emu.state_file = emu_mod.StateFile(self.emu, self.path)
        self.assertTrue(self.emu.state_file.restore(replay_ms))
        self.port = self.emu.start()

    def test_restore_keeps_l0_and_loses_claims(self):
        self.ctl("tables/events/generations", {"count": 3, "buckets": ["b1"]})
        self.ctl("tables/events/write", {"rows": 7, "bucket": "b0"})
        before = self.ctl("tables/events")[1]["buckets"]
        self.restarted(60000)
        st = self.ctl("tables/events")[1]
        self.assertEqual((st["claimed"], st["replaying"]), (False, True))
        self.assertEqual(st["buckets"], before)
        self.assertEqual(self.ctl("tables")[1], {"tables": ["events", "other"]})
        for route in emu_mod.ROUTES:
            r, data = self.req(route)
            self.assertEqual((r.status, json.loads(data)["code"]),
                             (429, emu_mod.CODE_REPLAYING), route)
        self.ctl("node", {"replayed": True})
        for route in ("get_lsm_stats", "compact_lsm"):
            r, data = self.req(route, body="{}")
            self.assertEqual((r.status, json.loads(data)),
                             (421, {"code": 19, "error": "table not claimed"}))
        self.assertEqual(self.req("flush_lsm")[0].status, 202)
        st = self.ctl("tables/events")[1]
        self.assertTrue(st["claimed"])
        self.assertEqual([b["writer_epoch"] for b in st["buckets"]], [2, 2])
        self.assertEqual(len(st["buckets"][1]["generations"]), 3)
        self.assertEqual(self.req("compact_lsm")[0].status, 202)

    def test_replay_ends_by_itself(self):
        self.restarted(100)
        self.assertEqual(self.req("flush_lsm")[0].status, 429)
        self.wait(lambda: not self.ctl("tables/events")[1]["replaying"])
        self.assertEqual(self.req("compact_lsm")[0].status, 421)

    def test_no_file_no_restore(self):
        self.assertFalse(self.emu.state_file.restore(100))
        self.assertTrue(self.ctl("tables/events")[1]["claimed"])

    def saved_l0(self):
        """L0 generations of events' bucket b0 in the state file as last
        saved; -1 before the first save."""
        try:
            with open(self.path) as fh:
                state = json.load(fh)
        except (OSError, ValueError):
            return -1
        t = [t for t in state["tables"] if t["name"] == "events"]
        return len(t[0]["buckets"][0]["l0"]) if t else -1

    def test_kill_9_and_restart(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "lsm_emulator.py")
        pf = os.path.join(self.tmp.name, "port")

        # the replay after the restart outlasts the test (it kills the
        # process), so that the flush below meets it however late it comes
        def start(port):
            return subprocess.Popen(
                [sys.executable, script, "--port", str(port), "--port-file", pf,
                 "--api-key", KEY, "--table", "events:1", "--quiet",
                 "--state-file", self.path, "--restart-replay-ms", "30000",
                 "--max-lifetime", "30"], stderr=subprocess.DEVNULL)

        def wait_port():
            t0 = time.time()
            while not os.path.exists(pf) and time.time() - t0 < 10:
                time.sleep(0.01)
            with open(pf) as fh:
                return int(fh.read())
        p = start(0)
        try:
            self.port = wait_port()
            self.ctl("tables/events/generations", {"count": 2})
            # killed once the state file holds both generations
            self.assertTrue(self.wait(lambda: self.saved_l0() == 2))
            p.kill()
            p.wait(5)
            os.unlink(pf)
            p = start(self.port)
            self.assertEqual(wait_port(), self.port)
            st = self.ctl("tables/events")[1]
            self.assertEqual(len(st["buckets"][0]["generations"]), 2)
            self.assertEqual(self.req("flush_lsm")[0].status, 429)
        finally:
            p.kill()
            p.wait(5)


if __name__ == "__main__":
    unittest.main()
