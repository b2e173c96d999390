// bench/sdk_checkpoint.js: the official Node SDK's checkpointLsm() on the
// convergence scenario (1 bucket, 3 L0 generations), REPS times.  Before
// each run: emulator reset, 3 generations recreated.  Prints one JSON line
// per run: {"ms", "flush", "compact", "stats", "passes", "maxrate"}.
// Usage: node sdk_checkpoint.js PORT KEY TABLE REPS
'use strict';
const lancedb = require('@lancedb/lancedb');
const [PORT, KEY, TABLE, REPS] = process.argv.slice(2);
const { base: BASE, ctl } = require('../test/conformance/emulator_client.js').emulatorClient(PORT);
const RUN_TIMEOUT_MS = 60000;

function maxrate(times) {
  times.sort((a, b) => a - b);
  let best = 0, j = 0;
  for (let i = 0; i < times.length; i++) {
    while (times[j] <= times[i] - 1.0) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

async function main() {
  for (let i = 0; i < Number(REPS); i++) {
    await ctl('POST', 'reset');
    await ctl('POST', `tables/${encodeURIComponent(TABLE)}/generations`, { count: 3, rows: 10 });
    const db = await lancedb.connect('db://mydb', { apiKey: KEY, hostOverride: BASE });
    const table = await db.openTable(TABLE);
    const t0 = process.hrtime.bigint();
    let timer;
    await Promise.race([
      table.checkpointLsm().finally(() => clearTimeout(timer)),
      new Promise((_, rej) => { timer = setTimeout(() => rej(new Error('SDK checkpoint timed out')), RUN_TIMEOUT_MS); }),
    ]);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const c = await ctl('GET', 'counts?table=' + encodeURIComponent(TABLE));
    const st = await ctl('GET', 'tables/' + encodeURIComponent(TABLE));
    const log = await ctl('GET', 'log?table=' + encodeURIComponent(TABLE));
    const lsm = log.requests.filter((r) => r.route && r.route.endsWith('_lsm') || r.route === 'get_lsm_stats');
    console.log(JSON.stringify({
      ms: Math.round(ms), flush: c.flush_lsm, compact: c.compact_lsm, stats: c.get_lsm_stats,
      passes: st.passes_completed, l0: st.buckets[0].generations.length,
      maxrate: maxrate(lsm.map((r) => r.time)),
    }));
    if (typeof table.close === 'function') table.close();
    if (typeof db.close === 'function') db.close();
  }
}
main().then(() => process.exit(0), (e) => { console.error(String(e)); process.exit(1); });
