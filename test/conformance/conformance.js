// SDK conformance checks: the official LanceDB Node SDK against the emulator.
//
// These cases check the emulator, not lancelsm: every outcome and call count
// asserted here is what @lancedb/lancedb (pinned by run.sh) really does when
// it talks to emulator/lsm_emulator.py.  Scenarios use separate tables so
// they run concurrently; counts are read per table from /_emulator/counts.
//
// Environment: EMU_PORT (required), EMU_KEY (default "k").
'use strict';

const assert = require('node:assert/strict');
const lancedb = require('@lancedb/lancedb');

const PORT = process.env.EMU_PORT;
const KEY = process.env.EMU_KEY || 'k';
const { base: BASE, ctl } = require('./emulator_client.js').emulatorClient(process.env.EMU_PORT);
const TEST_TIMEOUT_MS = 45000;

let passed = 0;
let failed = 0;


const state = (t) => ctl('GET', 'tables/' + encodeURIComponent(t));
const counts = (t) => ctl('GET', 'counts?table=' + encodeURIComponent(t));
const log = (t) => ctl('GET', 'log?table=' + encodeURIComponent(t));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function connect(apiKey = KEY) {
  return lancedb.connect('db://mydb', { apiKey, hostOverride: BASE });
}

async function newTable(name, spec = {}) {
  await ctl('POST', 'tables', { name, buckets: 1, rows_per_second: 0, ...spec });
  const db = await connect();
  const table = await db.openTable(name);
  return table;
}

// Counts of LSM route calls only (the describe call of openTable excluded).
async function routeCounts(t) {
  const c = await counts(t);
  return { flush: c.flush_lsm, compact: c.compact_lsm, stats: c.get_lsm_stats };
}

async function rejects(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection, got success');
}

function withTimeout(p, ms, name) {
  let timer;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise((_, rej) => {
      timer = setTimeout(() => rej(new Error(`${name}: timed out after ${ms} ms`)), ms);
    }),
  ]);
}

async function test(name, fn) {
  const t0 = Date.now();
  try {
    await withTimeout(fn(), TEST_TIMEOUT_MS, name);
    passed++;
    console.log(`ok - ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name} (${Date.now() - t0} ms)\n  ${e.stack || e}`);
  }
}

// ---------------------------------------------------------------------------

function compareStats(sdk, emu, withRows) {
  assert.equal(sdk.buckets.length, emu.buckets.length);
  sdk.buckets.forEach((b, i) => {
    const e = emu.buckets[i];
    assert.equal(b.shardId, e.shard_id);
    assert.equal(b.status, e.status);
    assert.equal(b.writerEpoch, e.writer_epoch);
    assert.equal(b.manifestVersion, e.manifest_version);
    assert.equal(b.currentGeneration, e.current_generation);
    assert.equal(b.replayAfterWalEntryPosition, e.replay_after_wal_entry_position);
    assert.equal(b.walEntryPositionLastSeen, e.wal_entry_position_last_seen);
    assert.equal(b.compacting, e.compacting);
    assert.deepEqual(
      b.generations.map((g) => [g.generation, g.bytes, g.rows ?? null]),
      e.generations.map((g) => [g.generation, g.bytes, withRows ? g.rows : null]),
    );
    assert.deepEqual(
      b.memtables.map((m) => [m.generation, m.rows, m.bytes, m.batches, m.indexes]),
      e.memtables.map((m) => [m.generation, m.rows, m.bytes, m.batches, m.indexes]),
    );
  });
}

const scenarios = [
  ['getLsmStats returns 4 buckets matching the emulator state', async () => {
    const t = await newTable('c_stats', { buckets: 4, rows_per_second: 400 });
    await sleep(300);
    await ctl('POST', 'tables/c_stats/generations', { count: 2, rows: 7 });
    await sleep(200);
    await ctl('POST', 'tables/c_stats/writer', { paused: true });
    await sleep(100);
    const withRows = await t.getLsmStats(true);
    compareStats(withRows, await state('c_stats'), true);
    const noRows = await t.getLsmStats();
    compareStats(noRows, await state('c_stats'), false);
    assert.equal(noRows.buckets.length, 4);
    // 2 from the control call, plus any the writer sealed itself (200 rows
    // per bucket) before the pause on a loaded machine; compareStats has
    // checked the exact lists against the emulator.
    assert.ok(noRows.buckets.every((b) => b.generations.length >= 2));
    const bodies = (await log('c_stats')).requests
      .filter((r) => r.route === 'get_lsm_stats').map((r) => JSON.parse(r.body));
    assert.deepEqual(bodies, [{ include_generation_rows: true }, { include_generation_rows: false }]);
  }],

  ['flushLsm and compactLsm succeed under write load', async () => {
    const t = await newTable('c_ops', { buckets: 4, rows_per_second: 400 });
    await sleep(300);
    // paused, so that the flush seals what is left and nothing follows it
    // (the writer seals a memtable itself at 200 rows, sooner or later
    // depending on the machine's load)
    await ctl('POST', 'tables/c_ops/writer', { paused: true });
    await t.flushLsm();
    let s = await state('c_ops');
    assert.ok(s.buckets.every((b) => b.generations.length >= 1 && b.memtables.at(-1).rows === 0),
      JSON.stringify(s.buckets));
    await t.compactLsm();
    s = await state('c_ops');
    assert.equal(s.passes_dispatched, 4);
    assert.deepEqual(await routeCounts('c_ops'), { flush: 1, compact: 1, stats: 0 });
    const reqs = (await log('c_ops')).requests.filter((r) => r.route !== null);
    assert.deepEqual(reqs.map((r) => [r.method, r.path, r.status]), [
      ['POST', '/v1/table/c_ops/flush_lsm/', 202],
      ['POST', '/v1/table/c_ops/compact_lsm/', 202],
    ]);
    assert.equal(reqs[0].headers['x-api-key'], '***');
    assert.match(reqs[0].headers['user-agent'], /^LanceDB-Node-Client\//);
    assert.match(reqs[0].headers['x-request-id'], /^[0-9a-f-]{36}$/);
  }],

  ['a wrong API key is refused with 401', async () => {
    await ctl('POST', 'tables', { name: 'c_auth', buckets: 1 });
    const db = await connect('wrong-key');
    const e = await rejects(db.openTable('c_auth'));
    assert.match(String(e.message), /401/);
    const reqs = (await log('c_auth')).requests;
    assert.ok(reqs.length >= 1 && reqs.every((r) => r.status === 401));
    // A key that goes wrong after the table was opened: the LSM route itself.
    const t = await newTable('c_auth2');
    await ctl('POST', 'faults', { table: 'c_auth2', route: 'flush_lsm', status: 401,
      json: { code: 2, error: 'invalid API key' } });
    const e2 = await rejects(t.flushLsm());
    assert.match(String(e2.message), /401/);
    assert.deepEqual(await routeCounts('c_auth2'), { flush: 1, compact: 0, stats: 0 });
  }],

  ['checkpointLsm converges under write load (4 buckets)', async () => {
    const t = await newTable('c_load', { buckets: 4, rows_per_second: 800 });
    await sleep(300);
    await ctl('POST', 'tables/c_load/generations', { count: 1 });
    await t.checkpointLsm();
    const reqs = (await log('c_load')).requests;
    const iFlush = reqs.findIndex((r) => r.route === 'flush_lsm');
    const watermarkRead = reqs.slice(iFlush + 1).find((r) => r.route === 'get_lsm_stats');
    const targets = {};
    for (const b of JSON.parse(watermarkRead.response).lsm_stats.buckets) {
      if (b.generations.length) targets[b.shard_id] = Math.max(...b.generations.map((g) => g.generation));
    }
    assert.equal(Object.keys(targets).length, 4);
    const after = await state('c_load');
    for (const b of after.buckets) {
      const left = b.generations.filter((g) => g.generation <= targets[b.shard_id]);
      assert.deepEqual(left, [], `bucket ${b.shard_id} still holds generations <= ${targets[b.shard_id]}`);
    }
    const c = await routeCounts('c_load');
    assert.equal(c.flush, 1);
    assert.ok(c.compact >= 1);
    // Writes kept sealing new generations while it ran; those may remain.
    assert.ok(after.buckets.some((b) => b.current_generation > targets[b.shard_id] + 1),
      'the writer sealed no generation during the checkpoint');
  }],

  ['target T, writers keep adding T+1, ...: one compact per generation up to T, then done', async () => {
    const t = await newTable('c_moving', { rows_per_second: 200 });
    await sleep(300);
    await t.checkpointLsm();
    const after = await state('c_moving');
    // One pass per generation at or below the target (one pass drains one):
    // 1 when the flush sealed the first generation, more when the writer
    // had sealed some itself before (200 rows, 1 s unloaded); each pass
    // costs one poll after its compact.
    const reqs = (await log('c_moving')).requests;
    const watermark = JSON.parse(reqs.find((r) => r.route === 'get_lsm_stats').response);
    const n = watermark.lsm_stats.buckets[0].generations.length;
    assert.ok(n >= 1);
    assert.deepEqual(await routeCounts('c_moving'), { flush: 1, compact: n, stats: n + 2 });
    assert.ok(after.buckets[0].generations.every((g) => g.generation > 1));
    assert.ok(after.buckets[0].current_generation > 2, JSON.stringify(after.buckets[0]));
  }],

  ['empty L0 after the flush: one flush, one stats read, zero compacts', async () => {
    const t = await newTable('c_empty', { buckets: 2 });
    await t.checkpointLsm();
    assert.deepEqual(await routeCounts('c_empty'), { flush: 1, compact: 0, stats: 1 });
  }],

  ['five 429s on flush then success: six flush calls, checkpoint succeeds', async () => {
    const t = await newTable('c_f429');
    await ctl('POST', 'faults', { table: 'c_f429', route: 'flush_lsm', status: 429, count: 5,
      json: { code: 6, error: 'contention' } });
    await t.checkpointLsm();
    assert.deepEqual(await routeCounts('c_f429'), { flush: 6, compact: 0, stats: 1 });
  }],

  ['every request answers 429: 1 + 8 = 9 calls, the error is the 429', async () => {
    const t = await newTable('c_all429');
    await ctl('POST', 'faults', { table: 'c_all429', route: '*', status: 429, count: -1,
      json: { code: 6, error: 'pool saturated' } });
    const e = await rejects(t.checkpointLsm());
    assert.match(String(e.message), /429/);
    assert.match(String(e.message), /pool saturated/);
    assert.deepEqual(await routeCounts('c_all429'), { flush: 9, compact: 0, stats: 0 });
  }],

  ['404 on the first call: exactly one call, table not found', async () => {
    const t = await newTable('c_404');
    await ctl('POST', 'faults', { table: 'c_404', route: '*', status: 404, count: -1,
      json: { code: 3, error: 'table c_404 not found' } });
    const e = await rejects(t.checkpointLsm());
    assert.match(String(e.message), /not found/i);
    assert.deepEqual(await routeCounts('c_404'), { flush: 1, compact: 0, stats: 0 });
  }],

  ['421 on compact: re-issued from flush, then succeeds', async () => {
    const t = await newTable('c_421');
    await ctl('POST', 'tables/c_421/generations', { count: 1 });
    await ctl('POST', 'faults', { table: 'c_421', route: 'compact_lsm', status: 421, count: 1,
      json: { code: 19, error: 'table not claimed' } });
    await t.checkpointLsm();
    // flush, stats, stats, compact(421) | flush, stats, stats, compact(202), [5 s] stats
    assert.deepEqual(await routeCounts('c_421'), { flush: 2, compact: 2, stats: 5 });
    const seq = (await log('c_421')).requests.filter((r) => r.route !== null).map((r) => `${r.route}:${r.status}`);
    assert.deepEqual(seq, ['flush_lsm:202', 'get_lsm_stats:200', 'get_lsm_stats:200',
      'compact_lsm:421', 'flush_lsm:202', 'get_lsm_stats:200', 'get_lsm_stats:200',
      'compact_lsm:202', 'get_lsm_stats:200']);
  }],

  ['421 on every flush: 1 + 3 re-issues, then "kept losing its claim"', async () => {
    const t = await newTable('c_421x');
    await ctl('POST', 'faults', { table: 'c_421x', route: 'flush_lsm', status: 421, count: -1,
      json: { code: 19, error: 'table not claimed' } });
    const e = await rejects(t.checkpointLsm());
    assert.match(String(e.message), /kept losing its claim/);
    assert.deepEqual(await routeCounts('c_421x'), { flush: 4, compact: 0, stats: 0 });
  }],

  ['a real lost claim (node restart): flush re-claims and replays the WAL', async () => {
    const t = await newTable('c_claim');
    await ctl('POST', 'tables/c_claim/generations', { count: 1 });
    await ctl('POST', 'tables/c_claim/claim', { claimed: false });
    const before = await state('c_claim');
    await t.checkpointLsm();
    const after = await state('c_claim');
    assert.equal(after.claimed, true);
    assert.equal(after.buckets[0].writer_epoch, before.buckets[0].writer_epoch + 1);
    assert.deepEqual(after.buckets[0].generations, []);
    assert.deepEqual(await routeCounts('c_claim'), { flush: 1, compact: 1, stats: 3 });
  }],

  ['three generations drained one per pass: exactly three compact calls', async () => {
    const t = await newTable('c_three');
    await ctl('POST', 'tables/c_three/generations', { count: 3 });
    await t.checkpointLsm();
    assert.deepEqual(await routeCounts('c_three'), { flush: 1, compact: 3, stats: 5 });
    assert.deepEqual((await state('c_three')).buckets[0].generations, []);
  }],

  ['every bucket compacting for many polls: zero compact calls, success', async () => {
    const t = await newTable('c_busy', { buckets: 2 });
    await ctl('POST', 'tables/c_busy/generations', { count: 1 });
    // The server's own trigger owns both latches for 11 s.
    const r = await ctl('POST', 'tables/c_busy/compact', { pass_ms: 11000 });
    assert.equal(r.latched, 2);
    await t.checkpointLsm();
    const c = await routeCounts('c_busy');
    assert.equal(c.compact, 0);
    assert.equal(c.flush, 1);
    assert.ok(c.stats >= 3, JSON.stringify(c));
  }],

  ['503 with code 19 (draining) from every call', async () => {
    const t = await newTable('c_drain');
    await ctl('POST', 'faults', { table: 'c_drain', route: '*', status: 503, count: -1,
      json: { code: 19, error: 'node is draining' } });
    const e = await rejects(t.checkpointLsm());
    assert.match(String(e.message), /draining/);
    // SDK 0.39.0 retries a draining 503 like any other 503 (1 + 8 calls,
    // about 16 s) and only then reports it; lancelsm fails at once instead
    // (protocol doc, "Choices").  See emulator/README.md.
    assert.deepEqual(await routeCounts('c_drain'), { flush: 9, compact: 0, stats: 0 });
  }],

  ['plain 503 (proxy, no code) is retried', async () => {
    const t = await newTable('c_503');
    await ctl('POST', 'faults', { table: 'c_503', route: 'flush_lsm', status: 503, count: 2,
      body: '<html>503 Service Temporarily Unavailable</html>', content_type: 'text/html' });
    await t.checkpointLsm();
    assert.deepEqual(await routeCounts('c_503'), { flush: 3, compact: 0, stats: 1 });
  }],

  ['LSM off: getLsmStats is undefined, flushLsm fails with 400', async () => {
    const t = await newTable('c_off', { lsm: false });
    assert.equal(await t.getLsmStats(), undefined);
    const e = await rejects(t.flushLsm());
    assert.match(String(e.message), /400/);
    await t.checkpointLsm().then(
      () => { throw new Error('checkpoint on a table without LSM unexpectedly succeeded'); },
      (err) => assert.match(String(err.message), /400/));
    assert.deepEqual(await routeCounts('c_off'), { flush: 2, compact: 0, stats: 1 });
  }],

  // The write spec routes.  write_spec_bodies.json holds, per spec, the
  // SDK's arguments, lancelsm's arguments and the wire body; the SDK's body
  // is compared with it here, lancelsm's in sql/write_spec.sql, so both
  // send the same JSON for the same spec.
  ...require('./write_spec_bodies.json').map((c, i) => [
    `setLsmWriteSpec body: ${c.name}`, async () => {
      const name = `c_spec_${i}`;
      const t = await newTable(name, { lsm: false, indexes: ['vec_idx', 'txt_idx'] });
      await t.setLsmWriteSpec(c.sdk);
      const sets = (await log(name)).requests.filter((r) => r.route === 'set_lsm_write_spec');
      assert.equal(sets.length, 1);
      assert.deepEqual(JSON.parse(sets[0].body), c.body);
      assert.equal(sets[0].headers['content-type'], 'application/json');
    }]),

  ['getLsmWriteSpec / unsetLsmWriteSpec: null indexes resolved, unset refused when nothing is set', async () => {
    const t = await newTable('c_spec_cycle', { lsm: false, indexes: ['vec_idx', 'txt_idx'] });
    assert.equal(await t.getLsmWriteSpec(), undefined);
    await t.setLsmWriteSpec({ specType: 'bucket', column: 'id', numBuckets: 3 });
    const spec = await t.getLsmWriteSpec();
    assert.equal(spec.specType, 'bucket');
    assert.equal(spec.column, 'id');
    assert.equal(spec.numBuckets, 3);
    assert.deepEqual(spec.maintainedIndexes, ['vec_idx', 'txt_idx']);
    assert.equal((await t.getLsmStats()).buckets.length, 3);
    await t.unsetLsmWriteSpec();
    assert.equal(await t.getLsmWriteSpec(), undefined);
    assert.equal(await t.getLsmStats(), undefined);
    const e = await rejects(t.unsetLsmWriteSpec());
    assert.match(String(e.message), /400|no LSM write spec/);
    const c = await counts('c_spec_cycle');
    assert.deepEqual([c.set_lsm_write_spec, c.unset_lsm_write_spec, c.get_lsm_write_spec],
      [1, 2, 3]);
    const unsets = (await log('c_spec_cycle')).requests
      .filter((r) => r.route === 'unset_lsm_write_spec');
    assert.deepEqual(unsets.map((r) => r.body), ['', '']);
  }],

  ['freshness: x-lancedb-min-read-version on every LSM route, the highest version answered before', async () => {
    const t = await newTable('c_fresh_routes', { lsm: false });
    await t.setLsmWriteSpec({ specType: 'unsharded' });
    await t.getLsmWriteSpec();
    await ctl('POST', 'tables/c_fresh_routes/generations', { count: 1 });
    await t.flushLsm();
    await t.getLsmStats();
    await t.compactLsm();
    await t.unsetLsmWriteSpec();
    const reqs = (await log('c_fresh_routes')).requests;
    // openTable's describe seeds the version from its body
    let highest = reqs[0].route === null ? JSON.parse(reqs[0].response).version : 0;
    const routes = new Set();
    for (const r of reqs.slice(1)) {
      assert.equal(r.headers['x-lancedb-min-read-version'], String(highest), r.route);
      assert.equal(r.headers['x-lancedb-min-timestamp'], undefined, r.route);
      routes.add(r.route);
      highest = Math.max(highest, r.version || 0);
    }
    assert.deepEqual([...routes].sort(), ['compact_lsm', 'flush_lsm', 'get_lsm_stats',
      'get_lsm_write_spec', 'set_lsm_write_spec', 'unset_lsm_write_spec']);
  }],

  ['freshness: readConsistencyInterval 0 sends x-lancedb-min-timestamp, now', async () => {
    await ctl('POST', 'tables', { name: 'c_fresh_interval', buckets: 1 });
    const db = await lancedb.connect('db://mydb', { apiKey: KEY, hostOverride: BASE,
      readConsistencyInterval: 0 });
    const t = await db.openTable('c_fresh_interval');
    const before = Date.now();
    await t.getLsmStats();
    const after = Date.now();
    const r = (await log('c_fresh_interval')).requests.filter((x) => x.route === 'get_lsm_stats')[0];
    const at = Date.parse(r.headers['x-lancedb-min-timestamp']);
    assert.ok(at >= before - 1 && at <= after + 1, r.headers['x-lancedb-min-timestamp']);
  }],

  ['write spec routes: the SDK retries 429 and 500 (lancelsm retries 500 on get only)', async () => {
    const t = await newTable('c_spec_retry', { lsm: false });
    await ctl('POST', 'faults', { table: 'c_spec_retry', route: 'set_lsm_write_spec',
      status: 429, count: 2 });
    await t.setLsmWriteSpec({ specType: 'unsharded' });
    await ctl('POST', 'faults', { table: 'c_spec_retry', route: 'get_lsm_write_spec',
      status: 500, count: 1 });
    assert.equal((await t.getLsmWriteSpec()).specType, 'unsharded');
    const c = await counts('c_spec_retry');
    assert.deepEqual([c.set_lsm_write_spec, c.get_lsm_write_spec], [3, 2]);
  }],
];

(async () => {
  if (!PORT) {
    console.error('EMU_PORT is not set');
    process.exit(2);
  }
  await Promise.all(scenarios.map(([name, fn]) => test(name, fn)));
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
