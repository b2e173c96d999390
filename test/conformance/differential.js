// Differential conformance: lancelsm against the official LanceDB Node SDK
// (@lancedb/lancedb, pinned by run.sh), both talking to the same emulator.
//
// 1. Decoder level: every body of stats_bodies.js is served verbatim as the
//    get_lsm_stats answer of a table of its own; the SDK's getLsmStats and
//    lancelsm's lancelsm_stats, lancelsm_generations and lancelsm_memtables
//    (differential.sql's conf.stats) read it, with and without generation
//    rows, and so do the monitoring functions once every table is declared
//    (conf.declared).  Both outcomes are normalized (below) and compared.
// 2. Loop level: for each variant of LOOP_VARIANTS two tables get the same
//    scripted state; the SDK's checkpointLsm runs on one and
//    lancelsm_checkpoint on the other, concurrently.  Asserted: the same
//    outcome (success, or failure with the same HTTP status), the same
//    flush and compact counts, the same final L0, and no more stats reads
//    by lancelsm than by the SDK.
//
// 3. Freshness level: the lagged read replicas of t/engine_fresh_reads.pl,
//    a checkpoint per side and scenario; both must converge with nothing
//    their flush sealed left in L0 (freshnessLevel).
//
// Disagreements are printed one per line; those matching EXCEPTIONS are
// counted apart.  Exit status 1 when any other disagreement is left.
// Environment: EMU_PORT, EMU_KEY (the emulator), PSQL and the libpq
// variables (a database where differential.sql ran).
'use strict';

const { execFile } = require('node:child_process');
const lancedb = require('@lancedb/lancedb');
const { generate } = require('./stats_bodies.js');

const { base: BASE, ctl } = require('./emulator_client.js').emulatorClient(process.env.EMU_PORT);
const KEY = process.env.EMU_KEY || 'k';
const PSQL = process.env.PSQL || 'psql';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The listed exceptions: where lancelsm deliberately departs from SDK
// 0.39.0 (docs/protocol.md, "Differential conformance").  Each says what
// both sides must do for the disagreement to be accepted.
const EXCEPTIONS = {
  renamed: { why: 'lancelsm also reads the renamed spelling of the pending upstream rename',
    sdk: 'refused', lancelsm: 'ok' },
  mixed: { why: 'an answer mixing both spellings is refused by lancelsm, ignored in part by the SDK',
    sdk: 'ok', lancelsm: 'refused' },
  'sdk-artifact': { why: 'what no server sends, accepted by the SDK\'s libraries only: serde reads a JSON '
    + 'array as a struct (so [] is "no LSM path"), and the HTTP client drops a UTF-8 byte order mark',
  sdk: 'ok', lancelsm: 'refused' },
  unnamed: { why: 'a bucket with an empty shard_id is refused: lancelsm names buckets in its rows and errors',
    sdk: 'ok', lancelsm: 'refused' },
  nul: { why: 'PostgreSQL text cannot hold a NUL character', sdk: 'ok', lancelsm: 'refused' },
  'rows-not-asked': { why: 'generation rows not asked for are skipped unread, never shown',
    sdk: 'refused', lancelsm: 'ok' },
  'beyond-int64': { why: 'a number above 2^63-1 cannot be a bigint: lancelsm refuses it as unsafe',
    sdk: 'ok', lancelsm: 'refused' },
};


// Each side of a loop variant is bounded by this; past it the outcome is
// "timeout" (the SDK's call is abandoned, lancelsm's statement_timeout).
const LOOP_BOUND_MS = 40000;

// psql(sql, statementTimeoutMs): the single value the query returns, as text.
function psql(sql, statementTimeoutMs = 90000) {
  return new Promise((resolve, reject) => {
    execFile(PSQL, ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1',
      '-c', `SET statement_timeout = ${statementTimeoutMs}`, '-c', sql],
    { maxBuffer: 256 << 20, timeout: statementTimeoutMs + 30000 },
      (err, stdout, stderr) => (err ? reject(new Error(`psql: ${err.message} ${stderr}`)) : resolve(stdout)));
  });
}

const sqlText = (s) => `'${s.replace(/'/g, "''")}'`;

// ---- normalization --------------------------------------------------------
//
// Both sides become {ok: true, buckets: [...]} or {ok: false}.  A bucket is
// its measured fields, its L0 as [generation, bytes, rows] and its
// memtables as [generation, rows, bytes, batches, indexes], with the
// per-bucket summaries lancelsm_stats derives from them (count, bytes,
// oldest, newest, memtable rows and bytes).  Numbers compare as JavaScript
// numbers: the SDK hands u64 over as a double, so two values that round to
// the same double (above 2^53) compare equal.  "No LSM path" (undefined
// from the SDK) is lancelsm's zero rows, and an absent memtables list is
// lancelsm's empty one.  Row counts are compared only when rows were asked
// for; without them lancelsm shows none.
function summarize(gens, mems, withRows) {
  const gbytes = gens.reduce((a, g) => a + g[1], 0);
  const nums = gens.map((g) => g[0]);
  return {
    l0_generations: gens.length,
    l0_bytes: gens.length ? gbytes : 0,
    oldest_l0_generation: nums.length ? Math.min(...nums) : null,
    newest_l0_generation: nums.length ? Math.max(...nums) : null,
    l0_rows: withRows && gens.length && gens.every((g) => g[2] !== null)
      ? gens.reduce((a, g) => a + g[2], 0) : null,
    memtables: mems.length,
    memtable_rows: mems.reduce((a, m) => a + m[1], 0),
    memtable_bytes: mems.reduce((a, m) => a + m[2], 0),
  };
}

function fromSdk(stats, withRows) {
  if (stats === undefined || stats === null) return { ok: true, buckets: [], groups: {} };
  const groups = {};
  const buckets = stats.buckets.map((b) => {
    const gens = b.generations.map((g) => [g.generation, g.bytes, withRows ? (g.rows ?? null) : null]);
    const mems = (b.memtables ?? []).map((m) => [m.generation, m.rows, m.bytes, m.batches, m.indexes]);
    (groups[b.shardId] ??= { generations: [], memtables: [] });
    groups[b.shardId].generations.push(...gens);
    groups[b.shardId].memtables.push(...mems);
    return {
      shard_id: b.shardId, status: b.status, writer_epoch: b.writerEpoch,
      manifest_version: b.manifestVersion, current_generation: b.currentGeneration,
      replay_after_wal_entry_position: b.replayAfterWalEntryPosition,
      wal_entry_position_last_seen: b.walEntryPositionLastSeen, compacting: b.compacting,
      ...summarize(gens, mems, withRows),
    };
  });
  return { ok: true, buckets, groups };
}

const MEASURED = ['shard_id', 'status', 'writer_epoch', 'manifest_version', 'current_generation',
  'replay_after_wal_entry_position', 'wal_entry_position_last_seen', 'compacting',
  'l0_generations', 'l0_bytes', 'oldest_l0_generation', 'newest_l0_generation', 'l0_rows',
  'memtables', 'memtable_rows', 'memtable_bytes'];

function fromLancelsm(r, withRows) {
  const failed = ['stats', 'generations', 'memtables'].filter((k) => !Array.isArray(r[k]));
  if (failed.length) {
    const e = r[failed[0]];
    return { ok: false, sqlstate: e.error, message: e.message, detail: e.detail, failed };
  }
  const num = (v) => (v === null || v === undefined ? v : Number(v));
  const groups = {};
  for (const g of r.generations) {
    (groups[g.shard_id] ??= { generations: [], memtables: [] })
      .generations.push([num(g.generation), num(g.bytes), withRows ? num(g.rows) : null]);
  }
  for (const m of r.memtables) {
    (groups[m.shard_id] ??= { generations: [], memtables: [] })
      .memtables.push([num(m.generation), num(m.rows), num(m.bytes), num(m.batches), m.indexes]);
  }
  const buckets = r.stats.map((s) => {
    const b = {};
    for (const k of MEASURED) b[k] = s[k];
    if (!withRows) b.l0_rows = null;
    b.memtables = b.memtables ?? 0;
    b.memtable_rows = b.memtable_rows ?? 0;
    b.memtable_bytes = b.memtable_bytes ?? 0;
    return b;
  });
  return { ok: true, buckets, groups };
}

// fromDeclared(entry): a table's rows of lancelsm_declared_bucket_stats(),
// or its error in lancelsm_declared_table_stats(), normalized as above
// (no rows asked; no L0 or memtable lists there).
function fromDeclared(e) {
  if (e === undefined) return { ok: false, sqlstate: 'none', message: 'not declared' };
  if (e.error) return { ok: false, sqlstate: e.error, message: e.message };
  const r = fromLancelsm({ stats: e.buckets, generations: [], memtables: [] }, false);
  return { ok: true, buckets: r.buckets, groups: undefined };
}

const canon = (v) => JSON.stringify(v);

// ---- decoder level --------------------------------------------------------

async function sdkStats(table, withRows) {
  try {
    return fromSdk(await table.getLsmStats(withRows), withRows);
  } catch (e) {
    return { ok: false, message: String(e.message).split('\n')[0] };
  }
}

async function decoderLevel() {
  const cases = generate();
  const db = await lancedb.connect('db://mydb', { apiKey: KEY, hostOverride: BASE });
  const names = cases.map((_, i) => `d_${i}`);
  // Serve each body; the SDK reads them, 16 tables at a time.
  const sdk = {};
  for (let i = 0; i < cases.length; i += 16) {
    await Promise.all(cases.slice(i, i + 16).map(async (c, j) => {
      const name = names[i + j];
      await ctl('POST', 'tables', { name, buckets: 1, rows_per_second: 0 });
      await ctl('POST', 'faults', { table: name, route: 'get_lsm_stats', status: 200,
        body: c.body, count: -1 });
      const t = await db.openTable(name);
      sdk[name] = { false: await sdkStats(t, false), true: await sdkStats(t, true) };
    }));
  }
  // lancelsm reads them all in one psql call.
  const out = await psql(`SELECT pg_catalog.jsonb_object_agg(t || ':' || r, conf.stats(t, r))
    FROM pg_catalog.unnest(ARRAY[${names.map(sqlText).join(',')}]) AS t,
         (VALUES (false), (true)) AS f(r)`);
  const pg = JSON.parse(out);
  // ... and, declared, through the monitoring functions (no rows asked).
  await psql(`SELECT pg_catalog.count(lancelsm_add_table('emu', t, validate => false))
    FROM pg_catalog.unnest(ARRAY[${names.map(sqlText).join(',')}]) AS t`);
  const declared = JSON.parse(await psql('SELECT conf.declared()'));

  const byName = Object.fromEntries(cases.map((c, i) => [c.name, names[i]]));
  let agree = 0;
  let excepted = 0;
  const disagreements = [];
  const perTag = {};
  const outcomes = [];      // [label, sdk, lancelsm, verdict]
  const short = (o) => (o.ok ? 'ok' : o.sqlstate ? `refused ${o.sqlstate}` : 'refused');
  cases.forEach((c, i) => {
    for (const [withRows, via] of [[false, 'stats'], [true, 'stats'], [false, 'declared']]) {
      const s = via === 'stats' ? sdk[names[i]][withRows] : { ...sdk[names[i]][false], groups: undefined };
      const l = via === 'stats' ? fromLancelsm(pg[`${names[i]}:${withRows}`], withRows)
        : fromDeclared(declared[names[i]]);
      const label = via === 'stats' ? `${c.name} [rows ${withRows}]` : `${c.name} [declared]`;
      const tag = withRows ? c.tag : (c.tagNoRows || c.tag);
      const ex = tag && EXCEPTIONS[tag];
      if (ex) {
        let fits = (s.ok ? 'ok' : 'refused') === ex.sdk && (l.ok ? 'ok' : 'refused') === ex.lancelsm;
        if (fits && c.sameAs) {
          const ref = sdk[byName[c.sameAs]][withRows];
          fits = ref.ok && canon(ref.buckets) === canon(l.buckets) &&
            (via === 'declared' || canon(ref.groups) === canon(l.groups));
        }
        if (fits) {
          excepted++;
          perTag[tag] = (perTag[tag] || 0) + 1;
          outcomes.push([label, short(s), short(l), `exception: ${tag}`]);
          continue;
        }
      }
      if (s.ok === l.ok && (!s.ok || canon([s.buckets, s.groups]) === canon([l.buckets, l.groups]))) {
        agree++;
        outcomes.push([label, short(s), short(l), 'agree']);
        continue;
      }
      outcomes.push([label, short(s), short(l), 'DISAGREE']);
      disagreements.push({ label, tag, sdk: s, lancelsm: l, body: c.body });
    }
  });
  if (process.env.DIFFERENTIAL_OUTCOMES) {
    require('node:fs').writeFileSync(process.env.DIFFERENTIAL_OUTCOMES,
      outcomes.map((o) => o.join('\t')).join('\n') + '\n');
  }
  return { bodies: cases.length, comparisons: outcomes.length, agree, excepted, perTag, disagreements };
}

function describe(o) {
  if (!o.ok) {
    return o.sqlstate ? `refused ${o.sqlstate}: ${o.message}${o.detail ? ' / ' + o.detail.split('\n')[0] : ''}`
      : `refused: ${o.message}`;
  }
  return `ok ${canon(o.buckets).slice(0, 300)}`;
}

// ---- loop level -----------------------------------------------------------

const report = (extra) => ({ flushed_buckets: 1, generations: [{ shard_id: 'b0', generation: 2 }], ...extra });
// Each variant: name, setup(t) applied to both sides' tables before the
// runs start, and options: gens (L0 generations of its one bucket before
// the runs, default 1), passMs (each pass's duration, default 20 ms:
// shorter than lancelsm's first poll, so that the counts compare answers,
// not pacing), node (emulator behaviour for the whole node), alone (run
// by itself after the others: node variants, and long passes that would
// hold the shared compactor pool's permits), converge (both sides must
// succeed), boundMs (each side's bound), exception (problems
// accepted, and why).
const LOOP_VARIANTS = [
  ['flush and compact 202, empty body (the emulator as it is)', async () => {}],
  ['flush answers 200 {}', async (t) => fault(t, 'flush_lsm', { status: 200, json: {}, apply: true, count: -1 })],
  ['compact answers 200 {}', async (t) => fault(t, 'compact_lsm', { status: 200, json: {}, apply: true, count: -1 })],
  ['flush answers 204', async (t) => fault(t, 'flush_lsm', { status: 204, body: '', apply: true, count: -1 })],
  ['compact answers 204', async (t) => fault(t, 'compact_lsm', { status: 204, body: '', apply: true, count: -1 })],
  ['flush answers 202 with a JSON report', async (t) =>
    fault(t, 'flush_lsm', { status: 202, json: report({}), apply: true, count: -1 })],
  ['compact answers 202 with a JSON report', async (t) =>
    fault(t, 'compact_lsm', { status: 202, json: report({ dispatched: 1 }), apply: true, count: -1 })],
  ['flush answers 200 with an HTML page', async (t) =>
    fault(t, 'flush_lsm', { status: 200, body: '<html><body>ok</body></html>', content_type: 'text/html',
      apply: true, count: -1 })],
  ['stats answer 203 (another 2xx), unrecognized members added', async (t) =>
    fault(t, 'get_lsm_stats', { mutate: 'extra', status: 203, count: -1 })],
  ['a Sealed bucket beside an Active one, both with L0', async (t) => {
    await ctl('POST', 'tables', { name: t, buckets: 2, rows_per_second: 0 });
    await ctl('POST', `tables/${t}/generations`, { count: 1 });
    await ctl('POST', `tables/${t}/bucket`, { bucket: 'b1', status: 'Sealed' });
  }],
  ['a Sealed bucket holding the only L0', async (t) => {
    await ctl('POST', 'tables', { name: t, buckets: 2, rows_per_second: 0 });
    await ctl('POST', `tables/${t}/generations`, { count: 1, buckets: ['b1'] });
    await ctl('POST', `tables/${t}/bucket`, { bucket: 'b1', status: 'Sealed' });
  }],
  ['draining (503 code 19) on every route for 2 s from the first request', async (t) =>
    fault(t, '*', { status: 503, json: { code: 19, error: 'node is draining' }, count: -1, for_ms: 2000 })],
  ['compact with nothing to do answers 202', async (t) =>
    fault(t, 'compact_lsm', { status: 202, body: '', count: 1 })],
  ['compact with nothing to do answers 429', async (t) =>
    fault(t, 'compact_lsm', { status: 429, json: { code: 6, error: 'no bucket to compact' }, count: 1 })],
  ['pacing: three generations, passes of 3 s', async () => {}, { gens: 3, passMs: 3000, alone: true,
    exception: { problems: ['more stats reads'],
      why: 'lancelsm polls adaptively (from 50 ms, doubling) to see a pass end sooner; the SDK every 5 s' } }],
  ['compacted generations stay listed after their pass (emulator keep_compacted)', async () => {},
    { node: { keep_compacted: true }, boundMs: 12000,
      exception: { problems: ['compact count', 'more stats reads'], sdk: 'timeout',
        why: 'both poll and compact until stopped (lancelsm: statement_timeout); how many passes fit '
          + 'depends on the pace: lancelsm polls adaptively, the SDK every 5 s' } }],
  ['a stall that heals: merged generations stay listed for 20 stats reads, then drain (emulator stale_reads)',
    async () => {},
    { node: { stale_reads: 20 }, boundMs: 45000, converge: true,
      exception: { problems: ['compact count', 'more stats reads'], sdk: 'ok',
        why: 'both wait and converge; lancelsm polls adaptively and so triggers more passes and reads '
          + 'more during the stall, the SDK polls every 5 s' } }],
];

function fault(table, route, spec) {
  return ctl('POST', 'faults', { table, route, ...spec });
}

// The HTTP status a failure carries, its class for the comparison.
function failureClass(text, sqlstate) {
  if (sqlstate === '57014') return 'timeout';
  const m = /\b(4\d\d|5\d\d)\b/.exec(text);
  return m ? `HTTP ${m[1]}` : 'no status';
}

async function loopSide(name, run) {
  const t0 = Date.now();
  const outcome = await run();
  const c = await ctl('GET', 'counts?table=' + encodeURIComponent(name));
  const st = await ctl('GET', 'tables/' + encodeURIComponent(name));
  return {
    ...outcome,
    ms: Date.now() - t0,
    flush: c.flush_lsm, compact: c.compact_lsm, stats: c.get_lsm_stats,
    l0: st.buckets.map((b) => `${b.shard_id}:[${b.generations.map((g) => g.generation)}]`).join(' '),
  };
}

async function loopVariant([name, setup, opts = {}], i) {
  const tables = { sdk: `l_${i}_sdk`, lancelsm: `l_${i}_pg` };
  const bound = opts.boundMs || LOOP_BOUND_MS;
  const db = await lancedb.connect('db://mydb', { apiKey: KEY, hostOverride: BASE });
  const handles = {};
  for (const t of Object.values(tables)) {
    await ctl('POST', 'tables', { name: t, buckets: 1, rows_per_second: 0 });
    await ctl('POST', `tables/${t}/generations`, { count: opts.gens || 1 });
  }
  for (const t of Object.values(tables)) {
    handles[t] = await db.openTable(t);
  }
  for (const t of Object.values(tables)) {
    await setup(t);
    await ctl('POST', `tables/${t}/pass_script`, { pass_ms: Array(16).fill(opts.passMs || 20) });
  }
  if (opts.node) await ctl('POST', 'behaviour', opts.node);
  const [s, l] = await Promise.all([
    loopSide(tables.sdk, async () => {
      let timer;
      const limit = new Promise((resolve) => {
        timer = setTimeout(() => resolve('timeout'), bound);
      });
      try {
        const r = await Promise.race([handles[tables.sdk].checkpointLsm(), limit]);
        clearTimeout(timer);
        return r === 'timeout' ? { ok: false, class: 'timeout', message: `still running after ${bound} ms` }
          : { ok: true, class: 'ok' };
      } catch (e) {
        clearTimeout(timer);
        return { ok: false, class: failureClass(String(e.message)), message: String(e.message).split('\n')[0] };
      }
    }),
    loopSide(tables.lancelsm, async () => {
      const r = JSON.parse(await psql(`SELECT conf.checkpoint(${sqlText(tables.lancelsm)})`, bound));
      return r.ok ? { ok: true, class: 'ok' }
        : { ok: false, class: failureClass(`${r.message} ${r.detail || ''}`, r.error),
          message: `${r.error}: ${r.message}`, detail: r.detail };
    }),
  ]);
  const problems = [];
  if (s.class !== l.class) problems.push('outcome');
  if (s.flush !== l.flush) problems.push('flush count');
  if (s.compact !== l.compact) problems.push('compact count');
  if (s.l0 !== l.l0) problems.push('final L0');
  if (l.stats > s.stats) problems.push('more stats reads');
  if (opts.converge && !(s.ok && l.ok)) problems.push('did not converge');
  if (opts.node) {
    await ctl('POST', 'behaviour', { keep_compacted: false, stale_reads: 0, idle_compact_status: 429 });
  }
  const ex = opts.exception;
  const excepted = ex && problems.length > 0 && problems.every((p) => ex.problems.includes(p)) &&
    (!ex.sdk || s.class === ex.sdk) && (!ex.problems.includes('outcome') || !l.ok);
  return { name, sdk: s, lancelsm: l, problems, excepted, why: ex && ex.why };
}

// ---- freshness level ------------------------------------------------------

// The lagged scenarios of t/engine_fresh_reads.pl on both sides: per
// scenario a table per side whose reads a replica answers LAG ms behind,
// with rows in the memtable (quiet) or also two L0 generations (backlog),
// the flush answered with or without x-lancedb-version (the emulator's
// no_version_header holds for every table, so the two halves run one after
// the other).  Without a version on the flush the SDK runs with
// readConsistencyInterval 0: its code reads fresh then only.  Asserted per
// side: ok, and no generation up to the one its own flush sealed left in
// L0 (read from the emulator's primary).
const FRESH_LAGS = [0, 5, 100, 200, 1000];

async function freshSide(t, sealed, run) {
  const t0 = Date.now();
  const outcome = await run();
  const st = await ctl('GET', 'tables/' + encodeURIComponent(t));
  const left = st.buckets[0].generations.map((g) => g.generation).filter((g) => g <= sealed);
  const c = await ctl('GET', 'counts?table=' + encodeURIComponent(t));
  return { outcome, left, sealed, ms: Date.now() - t0, flush: c.flush_lsm, compact: c.compact_lsm,
    stats: c.get_lsm_stats };
}

async function freshScenario(lag, kase, flushVersion, dbs) {
  const tag = `fr_${lag}_${kase}_${flushVersion ? 'v' : 'nv'}`;
  const names = { sdk: `${tag}_sdk`, lancelsm: `${tag}_pg` };
  const sealed = {};
  for (const t of Object.values(names)) {
    await ctl('POST', 'tables', { name: t, buckets: 1, rows_per_second: 0 });
    if (kase === 'backlog') await ctl('POST', `tables/${t}/generations`, { count: 2 });
    await ctl('POST', `tables/${t}/pass_script`, { pass_ms: Array(16).fill(20) });
  }
  const handle = await (flushVersion ? dbs.plain : dbs.fresh).openTable(names.sdk);
  for (const t of Object.values(names)) {
    await ctl('POST', 'freshness', { lag_ms: lag, table: t });
    await ctl('POST', `tables/${t}/write`, { rows: 5 });
    sealed[t] = (await ctl('GET', `tables/${t}`)).buckets[0].current_generation;
  }
  const [s, l] = await Promise.all([
    freshSide(names.sdk, sealed[names.sdk], async () => {
      let timer;
      const limit = new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), LOOP_BOUND_MS); });
      try {
        const r = await Promise.race([handle.checkpointLsm(), limit]);
        clearTimeout(timer);
        return r === 'timeout' ? 'timeout' : 'ok';
      } catch (e) {
        clearTimeout(timer);
        return `failed (${String(e.message).split('\n')[0].slice(0, 120)})`;
      }
    }),
    freshSide(names.lancelsm, sealed[names.lancelsm], async () => {
      const r = JSON.parse(await psql(`SELECT conf.checkpoint(${sqlText(names.lancelsm)})`, LOOP_BOUND_MS));
      return r.ok ? 'ok' : `failed (${r.error}: ${r.message})`;
    }),
  ]);
  const problems = [];
  for (const [who, o] of [['sdk', s], ['lancelsm', l]]) {
    if (o.outcome !== 'ok') problems.push(`${who} ${o.outcome}`);
    if (o.left.length) problems.push(`${who} left generations ${o.left.join(', ')} in L0`);
  }
  return { name: `lag ${lag} ms, ${kase}, flush ${flushVersion ? 'with' : 'without'} a version`
    + (flushVersion ? '' : ' (SDK: readConsistencyInterval 0)'), sdk: s, lancelsm: l, problems };
}

async function freshnessLevel() {
  const plain = await lancedb.connect('db://mydb', { apiKey: KEY, hostOverride: BASE });
  const fresh = await lancedb.connect('db://mydb', { apiKey: KEY, hostOverride: BASE,
    readConsistencyInterval: 0 });
  const results = [];
  for (const flushVersion of [true, false]) {
    await ctl('POST', 'freshness', { no_version_header: flushVersion ? [] : ['flush_lsm'] });
    const half = [];
    for (const lag of FRESH_LAGS) {
      for (const kase of ['quiet', 'backlog']) half.push(freshScenario(lag, kase, flushVersion, { plain, fresh }));
    }
    results.push(...await Promise.all(half));
  }
  await ctl('POST', 'freshness', { no_version_header: [] });
  return results;
}

const freshSideText = (o) => `${o.outcome}, flush ${o.flush}, compact ${o.compact}, stats ${o.stats}, ` +
  `sealed ${o.sealed}, left [${o.left}], ${o.ms} ms`;

const side = (o) => `${o.class}${o.message ? ` (${o.message.slice(0, 140)})` : ''}, flush ${o.flush}, ` +
  `compact ${o.compact}, stats ${o.stats}, L0 ${o.l0}, ${o.ms} ms`;

(async () => {
  if (!process.env.EMU_PORT) {
    console.error('EMU_PORT is not set');
    process.exit(2);
  }
  const only = process.env.DIFFERENTIAL_ONLY || '';
  let bad = 0;
  if (only === '' || only === 'decoder') {
    const d = await decoderLevel();
    for (const x of d.disagreements) {
      console.log(`DISAGREE decoder: ${x.label}\n  body:     ${x.body.slice(0, 200)}\n` +
        `  sdk:      ${describe(x.sdk)}\n  lancelsm: ${describe(x.lancelsm)}`);
    }
    console.log(`decoder level: ${d.bodies} bodies, ${d.comparisons} comparisons: ${d.agree} agree, ` +
      `${d.excepted} listed exceptions (${Object.entries(d.perTag).map(([t, n]) => `${t} ${n}`).join(', ') || 'none'}), ` +
      `${d.disagreements.length} disagreements`);
    bad += d.disagreements.length;
  }
  if (only === '' || only === 'fresh') {
    const results = await freshnessLevel();
    for (const r of results) {
      console.log(`${r.problems.length ? 'DISAGREE' : 'agree   '} fresh: ${r.name}` +
        `${r.problems.length ? ' [' + r.problems.join('; ') + ']' : ''}\n` +
        `  sdk:      ${freshSideText(r.sdk)}\n  lancelsm: ${freshSideText(r.lancelsm)}`);
    }
    const n = results.filter((r) => r.problems.length).length;
    console.log(`freshness level: ${results.length} scenarios: ${results.length - n} both converged, ${n} did not`);
    bad += n;
  }
  if (only !== 'decoder' && only !== 'fresh') {
    const indexed = LOOP_VARIANTS.map((v, i) => [v, i]);
    const alone = (v) => Boolean(v[2] && (v[2].node || v[2].alone));
    const results = await Promise.all(indexed.filter(([v]) => !alone(v))
      .map(([v, i]) => loopVariant(v, i)));
    for (const [v, i] of indexed.filter(([x]) => alone(x))) {
      results.push(await loopVariant(v, i));
    }
    for (const r of results) {
      const verdict = !r.problems.length ? 'agree   ' : r.excepted ? 'except  ' : 'DISAGREE';
      console.log(`${verdict} loop: ${r.name}` +
        `${r.problems.length ? ' [' + r.problems.join(', ') + ']' : ''}` +
        `${r.excepted ? ` listed exception: ${r.why}` : ''}\n` +
        `  sdk:      ${side(r.sdk)}\n  lancelsm: ${side(r.lancelsm)}`);
    }
    const n = results.filter((r) => r.problems.length && !r.excepted).length;
    const e = results.filter((r) => r.excepted).length;
    console.log(`loop level: ${results.length} variants: ${results.length - n - e} agree, ` +
      `${e} listed exceptions, ${n} disagree`);
    bad += n;
  }
  process.exit(bad === 0 ? 0 : 1);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
