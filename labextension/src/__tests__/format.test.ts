import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  badgeText,
  boundWritesText,
  badgeTooltip,
  breakLines,
  cachePhrase,
  formatBytes,
  formatCount,
  formatLines,
  formatPercent,
  formatRate,
  formatSeconds,
  groupBreaks,
  kernelLabel,
  opsPreview,
  plural,
  runStatus,
  sharesText,
  sourcePreview,
  summaryLine
} from '../format';
import { IFuseReport } from '../types';
import { read, sampleReport } from './fixtures';

function report(extra: { [key: string]: unknown } = {}): IFuseReport {
  return read(sampleReport(extra));
}

// The table jupyter_fuse/fmt.py is tested against too (tests/unit/test_fmt.py): one formatter, two languages.
const CASES = JSON.parse(readFileSync(join(__dirname, '..', '..', 'src', '__tests__', 'format_cases.json'), 'utf8'));

test('the formatters follow the shared table of cases', () => {
  for (const [t, text] of CASES.seconds) {
    assert.equal(formatSeconds(t), text, `seconds(${t})`);
  }
  for (const [n, text] of CASES.nbytes) {
    assert.equal(formatBytes(n), text, `nbytes(${n})`);
  }
  for (const [n, text] of CASES.rate) {
    assert.equal(formatRate(n), text, `rate(${n})`);
  }
  for (const [n, text] of CASES.count) {
    assert.equal(formatCount(n), text, `count(${n})`);
  }
  for (const [n, word, many, text] of CASES.plural) {
    assert.equal(plural(n, word, many), text, `plural(${n}, ${word})`);
  }
  for (const [share, text] of CASES.percent) {
    assert.equal(formatPercent(share), text, `percent(${share})`);
  }
  for (const [lines, text] of CASES.lines) {
    assert.equal(formatLines(lines), text, `lines(${lines})`);
  }
  for (const [writes, text] of CASES.bound_writes) {
    assert.equal(boundWritesText({ bound_writes: writes }), text, `bound_writes(${JSON.stringify(writes)})`);
  }
  assert.equal(formatSeconds(NaN), '?');
});

test('the badge has a mark and words per kind of run, kernels first', () => {
  assert.equal(badgeText(report()), '\u26a0 1 fallback \u00b7 2 kernels \u00b7 8 ops \u00b7 2.50 ms');
  assert.equal(badgeText(report({ fallbacks: [], kernels: 1 })), '\u26a1 1 kernel \u00b7 8 ops \u00b7 2.50 ms');
  const hit = report({ fallbacks: [], cache: 'hit', miss_reasons: [] });
  assert.equal(runStatus(hit), 'replayed');
  assert.match(badgeText(hit), /^\u21bb replayed /);
  assert.match(badgeText(report({ error: 'ZeroDivisionError' })), /^\u2716 error /);
  assert.equal(runStatus(report({ fallbacks: [], backend: 'numpy' })), 'reference');
});

test('summaryLine is like Report.summary()', () => {
  assert.equal(
    summaryLine(report()),
    'fuse[cpu]: 8 ops \u2192 2 kernels \u00b7 traced again: x.shape (10,) -> (20,) \u00b7 2.50 ms \u00b7 1 fallback'
  );
  const dry = report({ backend: 'cupy', options: { dry_run: true } });
  assert.match(summaryLine(dry), /^fuse\[cupy --dry-run\]: /);
});

test('the cache in a few words: a first run is no failure', () => {
  const first = ['no plan recorded for this cell yet (first run, or the cache was cleared)'];
  assert.equal(cachePhrase(report({ miss_reasons: first })), 'first run: plan recorded for replay');
  assert.equal(
    cachePhrase(report({ cache: 'unreplayable', miss_reasons: ['a', 'b', 'a'] })),
    'traced every run: a (+1 more)'
  );
  assert.equal(cachePhrase(report({ cache: 'hit', miss_reasons: [] })), 'replayed (every guard held)');
  const why = 'ran as plain NumPy: fusion does not pay for this cell (its replay took 74.6 ms, ...)';
  assert.equal(cachePhrase(report({ cache: 'numpy', miss_reasons: [why] })), why);
  assert.equal(cachePhrase(report({ cache: 'numpy', miss_reasons: [] })), 'ran as plain NumPy');
});

test('a loop kernel says how often it ran', () => {
  const r = report({
    kernel_list: [{ name: 'k0', ops: ['add'], lines: [2], bytes_read: 8, bytes_written: 8, time: 1, launches: 100 }]
  });
  assert.equal(kernelLabel(r.kernel_list[0]), 'k0 \u00d7100');
  assert.equal(kernelLabel(report().kernel_list[0]), 'k0');
});

test('time shares: kernels against overhead', () => {
  assert.equal(sharesText(report()), 'kernels 12% \u00b7 overhead 88%');
});

test('the op preview is cut at an op, never inside a name', () => {
  const ops = ['add', 'multiply', 'setitem', 'subtract', 'exp', 'negative', 'sqrt', 'cos'];
  assert.equal(opsPreview(ops, 30), 'add, multiply, \u2026 (+6 more)');
  assert.equal(opsPreview(['sin', 'power', 'sin']), 'sin \u00d72, power');
});

test('the numpy backend is the reference, not --no-fuse', () => {
  const cut = { from: 'k0', to: 'k1', line: 1, reason: 'fusion is off (--no-fuse): one kernel per op' };
  assert.match(breakLines(report({ backend: 'numpy', breaks: [cut] }))[0], /^the numpy backend is the reference/);
  const off = report({ backend: 'numpy', breaks: [cut], options: { fuse: false } });
  assert.match(breakLines(off)[0], /^fusion is off/);
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
  assert.match(tip, /Plan cache \(miss\): x.shape/);
  assert.match(badgeTooltip(report({ breaks: [] })), /No fusion breaks\./);
});

test('sourcePreview skips the magic line', () => {
  assert.equal(sourcePreview('%%fuse -b cpu\n\ny = np.sin(x)\nz = 1'), 'y = np.sin(x)');
  assert.equal(sourcePreview(''), '');
  assert.equal(sourcePreview('x = ' + 'a'.repeat(100), 10), 'x = aaaaa\u2026');
});
