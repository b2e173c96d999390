// The stats answer bodies of the decoder-level differential
// (differential.js), generated from the official SDK's type rules
// (lancedb/lancedb: rust/lancedb/src/table/checkpoint.rs, the types of
// SDK 0.39.0; lsm_stats.rs for the renamed spelling):
//   GetLsmStatsResponse { lsm_stats: Option<LsmStats> }      serde(default)
//   LsmStats { buckets: Vec<BucketStats> }
//   BucketStats { shard_id: String, status: String, writer_epoch,
//     manifest_version, current_generation,
//     replay_after_wal_entry_position, wal_entry_position_last_seen: u64,
//     generations: Vec<GenerationStats>, compacting: bool,
//     memtables: Option<Vec<MemtableStats>> }                 serde(default)
//   GenerationStats { generation, bytes: u64, rows: Option<u64> }
//   MemtableStats { generation, rows, bytes, batches: u64,
//     indexes: Vec<String> }
// Unknown members are ignored by serde at every level.  The two bases are
// the bodies the SDK's own mocked-server tests answer (remote/table.rs: the
// get_lsm_stats test with rows, and stats_body(&[3, 4], true)).
//
// Each case: {name, body (the exact text served), tag?, tagNoRows?,
// sameAs?}.  A tag names a listed exception (differential.js, EXCEPTIONS),
// tagNoRows one that holds only when rows are not asked for; sameAs names
// the case whose SDK outcome lancelsm's must equal (the renamed spelling).
'use strict';

// Raw(text): a JSON value written exactly as given (numbers beyond what a
// JavaScript number holds, 1.0 against 1).
class Raw {
  constructor(text) { this.text = text; }
}
// Pairs([[key, value], ...]): an object that may repeat a key.
class Pairs {
  constructor(pairs) { this.pairs = pairs; }
}
const DELETE = Symbol('absent');

function ser(v) {
  if (v instanceof Raw) return v.text;
  if (v instanceof Pairs) {
    return '{' + v.pairs.map(([k, x]) => JSON.stringify(k) + ':' + ser(x)).join(',') + '}';
  }
  if (Array.isArray(v)) return '[' + v.map(ser).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ':' + ser(x)).join(',') + '}';
  }
  return JSON.stringify(v);
}

const clone = (v) => JSON.parse(JSON.stringify(v));

// SDK mock 1: one Active bucket, one generation with rows, one memtable.
const BUCKET_A = {
  shard_id: 'b0', status: 'Active', writer_epoch: 3, manifest_version: 11,
  current_generation: 9, replay_after_wal_entry_position: 100,
  wal_entry_position_last_seen: 140,
  generations: [{ generation: 8, bytes: 4096, rows: 30 }],
  compacting: false,
  memtables: [{ generation: 9, rows: 12, bytes: 900, batches: 2, indexes: ['vec_idx'] }],
};
// SDK mock 2: stats_body(&[3, 4], true): no rows, memtables [].
const BUCKET_B = {
  shard_id: 'b0', status: 'Active', writer_epoch: 1, manifest_version: 1,
  current_generation: 5, replay_after_wal_entry_position: 0,
  wal_entry_position_last_seen: 0,
  generations: [{ generation: 3, bytes: 1 }, { generation: 4, bytes: 1 }],
  compacting: true, memtables: [],
};

const wrap = (buckets) => ({ lsm_stats: { buckets } });

// set(obj, path, value): a copy with the member at path (array of keys)
// replaced, or removed when value is DELETE.
function set(obj, path, value) {
  const out = clone(obj);
  let p = out;
  for (const k of path.slice(0, -1)) p = p[k];
  const last = path[path.length - 1];
  if (value === DELETE) delete p[last];
  else p[last] = value;
  return out;
}

const U64_FIELDS = ['writer_epoch', 'manifest_version', 'current_generation',
  'replay_after_wal_entry_position', 'wal_entry_position_last_seen'];
const GEN_FIELDS = ['generation', 'bytes', 'rows'];
const MEM_FIELDS = ['generation', 'rows', 'bytes', 'batches'];

// Wrong JSON types and non-u64 numbers for a u64 member.
const NOT_U64 = [['a string', '1'], ['true', true], ['1.5', 1.5], ['1.0', new Raw('1.0')],
  ['1e2', new Raw('1e2')], ['-1', -1], ['[]', []], ['{}', {}]];
// int64 edges: [label, literal, beyond int64 (refused by lancelsm only), beyond u64]
const EDGES = [
  ['0', '0'], ['2^53+1', '9007199254740993'], ['2^63-1', '9223372036854775807'],
  ['2^63', '9223372036854775808', 'beyond-int64'], ['2^64-1', '18446744073709551615', 'beyond-int64'],
  ['2^64', '18446744073709551616'], ['-2^63', '-9223372036854775808'],
];
const UNKNOWN_VALUES = [['null', null], ['a number', 7], ['an object', { a: [1, { b: null }] }]];

function generate() {
  const cases = [];
  const add = (name, value, extra = {}) =>
    cases.push({ name, body: typeof value === 'string' ? value : ser(value), ...extra });

  // The envelope.
  add('base: SDK mock with rows and a memtable', wrap([BUCKET_A]));
  add('base: SDK mock stats_body([3, 4], compacting)', wrap([BUCKET_B]));
  add('lsm_stats null (no LSM path)', { lsm_stats: null });
  add('lsm_stats absent (no LSM path)', {});
  add('lsm_stats null, an unknown member', { lsm_stats: null, server_version: '1.2' });
  add('no buckets', wrap([]));
  add('two buckets', wrap([BUCKET_A, set(BUCKET_B, ['shard_id'], 'b1')]));
  add('two buckets with the same shard_id', wrap([BUCKET_A, BUCKET_B]));
  add('32 buckets', wrap(Array.from({ length: 32 }, (_, i) => set(BUCKET_A, ['shard_id'], `b${i}`))));
  for (const [label, v] of [['{}', {}], ['[]', []], ['a string', 'x'], ['a number', 1], ['true', true]]) {
    add(`lsm_stats is ${label}`, { lsm_stats: v });
  }
  for (const [label, v] of [['absent', DELETE], ['null', null], ['{}', {}], ['a string', 'b0'],
    ['[null]', [null]], ['[1]', [1]], ['[[]]', [[]]]]) {
    add(`buckets ${label}`, set(wrap([BUCKET_A]), ['lsm_stats', 'buckets'], v));
  }
  for (const [label, text] of [['the body is null', 'null'], ['the body is []', '[]'],
    ['the body is a string', '"lsm_stats"'], ['the body is empty', ''],
    ['the body is not JSON', 'this is not json {'],
    ['the body is truncated', ser(wrap([BUCKET_A])).slice(0, 60)],
    ['garbage after the JSON', ser({ lsm_stats: null }) + ' x'],
    ['whitespace around the JSON', '\n ' + ser(wrap([BUCKET_A])) + ' \n'],
    ['a UTF-8 BOM before the JSON', '\ufeff' + ser({ lsm_stats: null })]]) {
    add(label, text, /\[\]|BOM/.test(label) ? { tag: 'sdk-artifact' } : {});
  }

  // Every bucket member: absent, null, wrong types.
  for (const base of [['A', BUCKET_A], ['B', BUCKET_B]]) {
    const [bn, b] = base;
    for (const f of Object.keys(b)) {
      add(`bucket ${bn}: ${f} absent`, wrap([set(b, [f], DELETE)]));
      add(`bucket ${bn}: ${f} null`, wrap([set(b, [f], null)]));
    }
  }
  for (const f of U64_FIELDS) {
    for (const [label, v] of NOT_U64) add(`bucket: ${f} ${label}`, wrap([set(BUCKET_A, [f], v)]));
  }
  for (const f of ['shard_id', 'status']) {
    for (const [label, v] of [['a number', 1], ['true', true], ['[]', []], ['{}', {}]]) {
      add(`bucket: ${f} ${label}`, wrap([set(BUCKET_A, [f], v)]));
    }
  }
  for (const [label, v] of [['"true"', 'true'], ['"yes"', 'yes'], ['1', 1], ['0', 0], ['[]', []]]) {
    add(`bucket: compacting ${label}`, wrap([set(BUCKET_A, ['compacting'], v)]));
  }
  for (const f of ['generations', 'memtables']) {
    for (const [label, v] of [['{}', {}], ['a string', 'x'], ['1', 1], ['[null]', [null]], ['[1]', [1]]]) {
      add(`bucket: ${f} ${label}`, wrap([set(BUCKET_A, [f], v)]));
    }
  }
  for (const [label, v, tag] of [['"" (empty)', '', 'unnamed'], ['a long UTF-8 name', 'bucket-é-' + 'x'.repeat(300)],
    ['with a quote and a backslash', 'a"b\\c'], ['escaped \\u0041', new Raw('"b\\u0041"')],
    ['holding a NUL (\\u0000)', new Raw('"b\\u0000c"'), 'nul']]) {
    add(`bucket: shard_id ${label}`, wrap([set(BUCKET_A, ['shard_id'], v)]), tag ? { tag } : {});
  }

  // Status: a free string.
  for (const s of ['ACTIVE', 'SEALED', 'active', 'Draining', '']) {
    add(`status "${s}"`, wrap([set(BUCKET_A, ['status'], s)]));
  }
  add('status "Sealed", memtables absent', wrap([set(set(BUCKET_A, ['status'], 'Sealed'), ['memtables'], DELETE)]));
  add('status "Sealed", memtables present', wrap([set(BUCKET_A, ['status'], 'Sealed')]));
  add('status "SEALED", memtables null', wrap([set(set(BUCKET_A, ['status'], 'SEALED'), ['memtables'], null)]));

  // Generation and memtable members.
  for (const f of GEN_FIELDS) {
    add(`generation: ${f} absent`, wrap([set(BUCKET_A, ['generations', 0, f], DELETE)]));
    add(`generation: ${f} null`, wrap([set(BUCKET_A, ['generations', 0, f], null)]));
    for (const [label, v] of NOT_U64.slice(0, 6)) {
      add(`generation: ${f} ${label}`, wrap([set(BUCKET_A, ['generations', 0, f], v)]),
        f === 'rows' ? { tagNoRows: 'rows-not-asked' } : {});
    }
  }
  add('generations: rows on one of two', wrap([set(BUCKET_A, ['generations'],
    [{ generation: 7, bytes: 10, rows: 3 }, { generation: 8, bytes: 4096 }])]));
  add('generations: rows null on one of two', wrap([set(BUCKET_A, ['generations'],
    [{ generation: 7, bytes: 10, rows: 3 }, { generation: 8, bytes: 4096, rows: null }])]));
  add('generations: out of order', wrap([set(BUCKET_A, ['generations'],
    [{ generation: 8, bytes: 4096, rows: 30 }, { generation: 7, bytes: 10, rows: 3 }])]));
  for (const f of MEM_FIELDS) {
    add(`memtable: ${f} absent`, wrap([set(BUCKET_A, ['memtables', 0, f], DELETE)]));
    add(`memtable: ${f} null`, wrap([set(BUCKET_A, ['memtables', 0, f], null)]));
    for (const [label, v] of NOT_U64.slice(0, 6)) {
      add(`memtable: ${f} ${label}`, wrap([set(BUCKET_A, ['memtables', 0, f], v)]));
    }
  }
  for (const [label, v] of [['absent', DELETE], ['null', null], ['[]', []], ['a string', 'vec_idx'],
    ['[1]', [1]], ['[null]', [null]], ['{}', {}], ['two names', ['vec_idx', 'fts_idx']]]) {
    add(`memtable: indexes ${label}`, wrap([set(BUCKET_A, ['memtables', 0, 'indexes'], v)]));
  }

  // int64 and u64 edges on every number.
  const numberPaths = [...U64_FIELDS.map((f) => [f]),
    ...GEN_FIELDS.map((f) => ['generations', 0, f]),
    ...MEM_FIELDS.map((f) => ['memtables', 0, f])];
  for (const path of numberPaths) {
    for (const [label, lit, tag] of EDGES) {
      const rowsRefused = path[0] === 'generations' && path[2] === 'rows' && !tag && lit !== '0' && !lit.startsWith('9');
      add(`${path.join('.')} = ${label}`, wrap([set(BUCKET_A, path, new Raw(lit))]),
        { ...(tag ? { tag } : {}), ...(rowsRefused ? { tagNoRows: 'rows-not-asked' } : {}) });
    }
  }

  // Unknown members at every level.
  const levels = [['the top', []], ['lsm_stats', ['lsm_stats']], ['a bucket', ['lsm_stats', 'buckets', 0]],
    ['a generation', ['lsm_stats', 'buckets', 0, 'generations', 0]],
    ['a memtable', ['lsm_stats', 'buckets', 0, 'memtables', 0]]];
  for (const [where, path] of levels) {
    for (const [label, v] of UNKNOWN_VALUES) {
      add(`unknown member (${label}) in ${where}`, set(wrap([BUCKET_A]), [...path, 'x_future'], v));
    }
  }
  add('unknown members everywhere, before the known ones', new Raw(
    '{"x0":{"deep":[1,2,{"x":null}]},"lsm_stats":{"x1":[],"buckets":[{"x2":"s",' +
    ser(BUCKET_A).slice(1).replace('"generations":[{', '"generations":[{"x3":1.5,')
      .replace('"memtables":[{', '"memtables":[{"x4":false,') + ']}}'));

  // Duplicate members (serde refuses a duplicate field of a struct).
  add('duplicate lsm_stats', new Pairs([['lsm_stats', null], ['lsm_stats', null]]));
  add('duplicate bucket member', wrap([new Pairs([...Object.entries(BUCKET_A), ['compacting', false]])]));
  add('duplicate unknown member', new Pairs([['lsm_stats', null], ['x', 1], ['x', 2]]));

  // The pending upstream rename (lsm_stats.rs at HEAD): lancelsm reads it,
  // SDK 0.39.0 does not; a mix of both spellings lancelsm refuses.
  const renamed = (b) => {
    const r = set(b, ['sstables'], b.generations);
    delete r.generations;
    return { lsm_stats: { table_shards: [r] } };
  };
  add('renamed: table_shards and sstables (A)', renamed(BUCKET_A),
    { tag: 'renamed', sameAs: 'base: SDK mock with rows and a memtable' });
  add('renamed: table_shards and sstables (B)', renamed(BUCKET_B),
    { tag: 'renamed', sameAs: 'base: SDK mock stats_body([3, 4], compacting)' });
  add('renamed: table_shards, no shards', { lsm_stats: { table_shards: [] } },
    { tag: 'renamed', sameAs: 'no buckets' });
  add('mixed: table_shards with generations', { lsm_stats: { table_shards: [BUCKET_A] } });
  add('mixed: buckets with sstables', wrap(renamed(BUCKET_A).lsm_stats.table_shards));
  add('mixed: buckets and table_shards both', { lsm_stats: { buckets: [BUCKET_A], table_shards: [] } },
    { tag: 'mixed' });
  add('mixed: generations and sstables both', wrap([set(BUCKET_A, ['sstables'], [])]), { tag: 'mixed' });
  return cases;
}

module.exports = { generate };
