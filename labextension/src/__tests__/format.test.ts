import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  badgeText,
  badgeTooltip,
  breakLines,
  formatBytes,
  formatLines,
  formatSeconds,
  groupBreaks,
  plural,
  sourcePreview,
  summaryLine
} from '../format';
import { IFuseReport } from '../types';
import { read, sampleReport } from './fixtures';

function report(extra: { [key: string]: unknown } = {}): IFuseReport {
  return read(sampleReport(extra));
}

test('formatSeconds', () => {
  assert.equal(formatSeconds(0.0042), '4.2 ms');
  assert.equal(formatSeconds(0.00012), '0.12 ms');
  assert.equal(formatSeconds(12.34), '12.3 s');
  assert.equal(formatSeconds(-1), '?');
  assert.equal(formatSeconds(NaN), '?');
});

test('formatBytes matches report.py', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1023), '1023 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(3 * 1024 * 1024), '3.0 MiB');
  assert.equal(formatBytes(5 * 1024 ** 4), '5120.0 GiB');
});

test('plural', () => {
  assert.equal(plural(1, 'kernel'), '1 kernel');
  assert.equal(plural(0, 'kernel'), '0 kernels');
  assert.equal(plural(3, 'op'), '3 ops');
});

test('formatLines collapses runs', () => {
  assert.equal(formatLines([]), '');
  assert.equal(formatLines([4]), 'line 4');
  assert.equal(formatLines([3, 1, 2]), 'lines 1-3');
  assert.equal(formatLines([1, 2, 5, 5]), 'lines 1-2, 5');
});

test('badgeText leads with the kernel count', () => {
  assert.equal(badgeText(report()), '2 kernels \u00b7 8 ops \u00b7 cache miss \u00b7 2.5 ms');
  assert.equal(badgeText(report({ cache: 'off', kernels: 1 })), '1 kernel \u00b7 8 ops \u00b7 2.5 ms');
  assert.match(badgeText(report({ error: 'ZeroDivisionError' })), /error$/);
});

test('summaryLine is like Report.summary()', () => {
  assert.equal(
    summaryLine(report()),
    'fuse[cpu]: 8 ops \u2192 2 kernels \u00b7 cache miss \u00b7 2.5 ms \u00b7 1 fallback'
  );
  const dry = report({ backend: 'cupy', options: { dry_run: true } });
  assert.match(summaryLine(dry), /^fuse\[cupy --dry-run\]: /);
});

test('breaks are grouped by reason with their lines', () => {
  const r = report({
    breaks: [
      { reason: 'reduction boundary', line: 2 },
      { reason: 'library op', line: 5 },
      { reason: 'reduction boundary', line: 3 },
      { reason: 'reduction boundary', line: 3 }
    ]
  });
  assert.deepEqual(groupBreaks(r.breaks), [
    { reason: 'reduction boundary', count: 3, lines: [2, 3] },
    { reason: 'library op', count: 1, lines: [5] }
  ]);
  assert.deepEqual(breakLines(r), ['reduction boundary (lines 2-3) \u00d73', 'library op (line 5)']);
});

test('the badge tooltip names the fusion breaks', () => {
  const tip = badgeTooltip(report());
  assert.match(tip, /Fusion breaks \(1\):/);
  assert.match(tip, /reduction boundary \(line 2\)/);
  assert.match(tip, /Fallback \(line 3\): np.sort/);
  assert.match(tip, /Sync \(line 4\): float\(\)/);
  assert.match(tip, /Cache miss: x.shape/);
  assert.match(badgeTooltip(report({ breaks: [] })), /No fusion breaks\./);
});

test('sourcePreview skips the magic line', () => {
  assert.equal(sourcePreview('%%fuse -b cpu\n\ny = np.sin(x)\nz = 1'), 'y = np.sin(x)');
  assert.equal(sourcePreview(''), '');
  assert.equal(sourcePreview('x = ' + 'a'.repeat(100), 10), 'x = aaaaa\u2026');
});
