import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseReport } from '../schema';
import { read, sampleReport } from './fixtures';

/** The parse message, or a failed test. */
function message(data: unknown): string {
  const r = parseReport(data);
  assert.equal(r.ok, false);
  return r.ok ? '' : r.message;
}

test('a schema-1 report is read with its fields', () => {
  const r = read(sampleReport());
  assert.equal(r.kernels, 2);
  assert.equal(r.ops, 8);
  assert.equal(r.cache, 'miss');
  assert.equal(r.kernel_list[0].ops.length, 3);
  assert.equal(r.breaks[0].reason, 'reduction boundary');
  assert.equal(r.times.total, 0.0025);
  assert.equal(r.error, null);
});

test('a report serialized as a JSON string is read too', () => {
  assert.equal(read(JSON.stringify(sampleReport())).kernels, 2);
});

test('missing optional fields get defaults; bytes_moved is derived', () => {
  const r = read({ schema: 1, ops: 3, kernels: 1, kernel_list: [{ bytes_read: 5, bytes_written: 7 }] });
  assert.equal(r.backend, '?');
  assert.equal(r.cache, 'off');
  assert.deepEqual(r.breaks, []);
  assert.equal(r.bytes_moved, 12);
  assert.equal(r.kernel_list[0].name, 'k0');
});

test('an unknown schema version is a readable message', () => {
  const m = message(sampleReport({ schema: 2 }));
  assert.match(m, /schema 2 is not supported/);
  assert.ok(m.startsWith('jupyter-fuse: '));
  assert.match(message(sampleReport({ schema: '1' })), /schema "1" is not supported/);
});

test('a missing schema is a readable message', () => {
  const d = sampleReport();
  delete d.schema;
  assert.match(message(d), /no report schema version/);
});

test('malformed JSON is a readable message', () => {
  assert.match(message('{"schema": 1, "ops": '), /not valid JSON/);
});

test('non-objects are readable messages', () => {
  for (const v of [null, 3, [1, 2], undefined, true]) {
    assert.match(message(v), /should be a JSON object/, String(v));
  }
});

test('wrong field types are readable messages, not exceptions', () => {
  assert.match(message(sampleReport({ kernels: 'two' })), /"kernels" should be a number, got string/);
  assert.match(message(sampleReport({ breaks: 'x' })), /"breaks" should be a list/);
  assert.match(message(sampleReport({ breaks: [null] })), /breaks\[0\] should be an object/);
  assert.match(message(sampleReport({ times: [] })), /"times" should be an object/);
});
