import assert from 'node:assert/strict';
import { test } from 'node:test';

import { collectFusedCells, findReportData, fusedCellKey, ICellLike } from '../outputs';
import { MIME_TYPE } from '../types';
import { sampleReport } from './fixtures';

function cell(id: string, outputs: ICellLike['outputs'], type = 'code'): ICellLike {
  return { id, type, source: `%%fuse\ny${id} = x`, executionCount: 1, outputs };
}

test('findReportData takes the last output that carries a report', () => {
  const a = sampleReport({ kernels: 1 });
  const b = sampleReport({ kernels: 5 });
  const outputs = [{ data: { [MIME_TYPE]: a } }, { data: { 'text/plain': 'hi' } }, { data: { [MIME_TYPE]: b } }, {}];
  assert.equal(findReportData(outputs), b);
  assert.equal(findReportData([{ data: { 'text/plain': 'x' } }, { data: null }]), undefined);
});

test('collectFusedCells lists fused code cells in order, with their index', () => {
  const cells = [
    cell('a', [{ data: { [MIME_TYPE]: sampleReport({ kernels: 3 }) } }]),
    cell('b', [{ data: { 'text/plain': '1' } }]),
    cell('c', [], 'markdown'),
    cell('d', [{ data: { [MIME_TYPE]: '{oops' } }])
  ];
  const fused = collectFusedCells(cells);
  assert.deepEqual(
    fused.map(c => [c.id, c.index]),
    [
      ['a', 0],
      ['d', 3]
    ]
  );
  assert.equal(fused[0].report?.kernels, 3);
  assert.equal(fused[0].message, null);
  assert.equal(fused[1].report, null);
  assert.match(fused[1].message ?? '', /not valid JSON/);
});

test('fusedCellKey changes with a new run', () => {
  const one = collectFusedCells([cell('a', [{ data: { [MIME_TYPE]: sampleReport() } }])])[0];
  const again = collectFusedCells([cell('a', [{ data: { [MIME_TYPE]: sampleReport() } }])])[0];
  const rerun = { ...one, executionCount: 2 };
  assert.equal(fusedCellKey(one), fusedCellKey(again));
  assert.notEqual(fusedCellKey(one), fusedCellKey(rerun));
});
