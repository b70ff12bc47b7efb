/**
 * Text for the views: numbers, summaries, badge labels and tooltips.
 * Pure: no DOM, no JupyterLab.
 *
 * The unit formatters follow jupyter_fuse/fmt.py rule for rule (three
 * significant digits, binary bytes, one unit per magnitude); both are tested
 * against the same table (src/__tests__/format_cases.json). The report phrases
 * (cache, cut reasons, kernel labels) follow jupyter_fuse/report.py.
 */
import { IBreakInfo, IFuseReport, IKernelInfo } from './types';

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** Three significant digits, no exponent (v >= 0): 0.42, 1.23, 12.3, 123; decided on the rounded text. */
function sig3(v: number): string {
  for (const [decimals, limit] of [
    [2, 10],
    [1, 100]
  ]) {
    const text = v.toFixed(decimals);
    if (parseFloat(text) < limit) {
      return text;
    }
  }
  return v.toFixed(0);
}

/** A duration: `0 s`, `842 µs`, `12.4 ms`, `2.38 s`, `1 min 05 s`; `?` when unknown. */
export function formatSeconds(t: number): string {
  if (!isFinite(t) || t < 0) {
    return '?';
  }
  if (t === 0) {
    return '0 s';
  }
  if (t >= 59.95) {
    const total = Math.round(t);
    return `${Math.floor(total / 60)} min ${String(total % 60).padStart(2, '0')} s`;
  }
  const scales: [number, string, string | null][] = [
    [1e-6, '\u00b5s', 'ms'],
    [1e-3, 'ms', 's'],
    [1, 's', null]
  ];
  for (const [scale, unit, bigger] of scales) {
    if (t < scale * 1000 || bigger === null) {
      const text = sig3(t / scale);
      return text === '1000' && bigger ? `1.00 ${bigger}` : `${text} ${unit}`;
    }
  }
  return '?';
}

/** A size in binary units: `512 B`, `1.50 KiB`, `38.1 MiB`; a sign when negative. */
export function formatBytes(n: number): string {
  if (!isFinite(n)) {
    return '?';
  }
  const sign = n < 0 ? '-' : '';
  let v = Math.abs(n);
  let unit = 0;
  while (v >= 1024 && unit < BYTE_UNITS.length - 1) {
    v /= 1024;
    unit++;
  }
  if (unit === 0) {
    return `${sign}${v.toFixed(0)} B`;
  }
  let text = sig3(v);
  if (text === '1024' && unit < BYTE_UNITS.length - 1) {
    text = '1.00';
    unit++;
  }
  return `${sign}${text} ${BYTE_UNITS[unit]}`;
}

/** A bandwidth: `12.9 GiB/s`. */
export function formatRate(bytesPerSecond: number): string {
  return !isFinite(bytesPerSecond) || bytesPerSecond < 0 ? '?' : `${formatBytes(bytesPerSecond)}/s`;
}

/** An integer with thousands separators: `4,194,304`. */
export function formatCount(n: number): string {
  return Math.trunc(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * The cost of names a cell leaves bound to its temporaries (report.py's `bound_writes_text`, held to the
 * same table of cases): "" when there is none.
 */
export function boundWritesText(r: Pick<IFuseReport, 'bound_writes'>): string {
  const writes = r.bound_writes ?? [];
  if (!writes.length) {
    return '';
  }
  const names = writes.flatMap(w => w.names);
  const total = writes.reduce((n, w) => n + w.bytes, 0);
  const shown = names.slice(0, 8).join(', ') + (names.length > 8 ? ` and ${names.length - 8} more` : '');
  return (
    `written only because a name still holds it: ${shown} (${formatBytes(total)}; no other kernel ` +
    `reads ${names.length > 1 ? 'them' : 'it'}: \`del\` a temporary and it stays inside its kernel)`
  );
}

/** `plural(1, "kernel")` -> `"1 kernel"`, `plural(3, "kernel")` -> `"3 kernels"`. */
export function plural(n: number, word: string, many?: string | null): string {
  return `${formatCount(n)} ${n === 1 ? word : (many ?? word + 's')}`;
}

/** A share in [0, 1] as a whole percentage: `23%`; `<1%` for a small non-zero share. */
export function formatPercent(share: number): string {
  if (!isFinite(share)) {
    return '?';
  }
  if (share > 0 && share < 0.005) {
    return '<1%';
  }
  return `${(share * 100).toFixed(0)}%`;
}

/** `[3, 1, 2]` -> `"lines 1-3"`, `[4]` -> `"line 4"`, `[1, 2, 5]` -> `"lines 1-2, 5"`. */
export function formatLines(lines: readonly number[]): string {
  if (!lines.length) {
    return '';
  }
  const sorted = [...new Set(lines)].sort((a, b) => a - b);
  const runs: string[] = [];
  let start = sorted[0];
  let prev = start;
  for (const n of sorted.slice(1).concat([NaN])) {
    if (n === prev + 1) {
      prev = n;
      continue;
    }
    runs.push(start === prev ? `${start}` : `${start}-${prev}`);
    start = prev = n;
  }
  return `${sorted.length === 1 ? 'line' : 'lines'} ${runs.join(', ')}`;
}

// -- report phrases (report.py) ------------------------------------------------------------

export const FIRST_RUN = 'no plan recorded for this cell yet'; // report.py's FIRST_RUN
const NO_FUSE_REASON = 'fusion is off (--no-fuse): one kernel per op';
const NUMPY_REFERENCE =
  'the numpy backend is the reference: one NumPy call per op, never fused (-b cpu or -b cupy fuse)';

/** `k0`, or `k0 ×100` for a kernel that ran 100 times. */
export function kernelLabel(k: IKernelInfo): string {
  return k.launches > 1 ? `${k.name} \u00d7${formatCount(k.launches)}` : k.name;
}

/** A cut's reason as the user should read it (the numpy backend is the reference, not `--no-fuse`). */
export function breakReason(r: IFuseReport, b: IBreakInfo): string {
  if (b.reason === NO_FUSE_REASON && r.backend === 'numpy' && r.options?.fuse !== false) {
    return NUMPY_REFERENCE;
  }
  return b.reason;
}

/** The plan cache in a few words (every reason is in the card's notes). */
export function cachePhrase(r: IFuseReport): string {
  const reasons = [...new Set(r.miss_reasons)];
  const more = reasons.length > 1 ? ` (+${reasons.length - 1} more)` : '';
  switch (r.cache) {
    case 'hit':
      return 'replayed (every guard held)';
    case 'miss':
      return !reasons.length || reasons.every(m => m.startsWith(FIRST_RUN))
        ? 'first run: plan recorded for replay'
        : `traced again: ${reasons[0]}${more}`;
    case 'unreplayable':
      return reasons.length ? `traced every run: ${reasons[0]}${more}` : 'traced every run';
    case 'numpy': // a cell fusion does not pay for (runner.PLAIN_MIN): why, in the first reason
      return reasons.length ? reasons[0] : 'ran as plain NumPy';
    default:
      return 'cache off';
  }
}

/** What kind of run this was: error, fallbacks, replayed, reference (numpy), no-fuse or clean. */
export type RunStatus = 'error' | 'fallbacks' | 'replayed' | 'reference' | 'no-fuse' | 'clean';

export function runStatus(r: IFuseReport): RunStatus {
  if (r.error) {
    return 'error';
  }
  if (r.fallbacks.length) {
    return 'fallbacks';
  }
  if (r.cache === 'hit') {
    return 'replayed';
  }
  if (r.backend === 'numpy') {
    return 'reference';
  }
  return r.options?.fuse === false ? 'no-fuse' : 'clean';
}

/** The badge's mark for each status: a shape and a word, never colour alone. */
export const STATUS_MARK: { [status in RunStatus]: string } = {
  error: '\u2716 error',
  fallbacks: '\u26a0',
  replayed: '\u21bb replayed',
  reference: '\u26a1',
  'no-fuse': '\u26a1',
  clean: '\u26a1'
};

/** The total run time of a report: `times.total`, else the sum of the phases. */
export function totalSeconds(r: IFuseReport): number {
  if (typeof r.times.total === 'number') {
    return r.times.total;
  }
  return Object.values(r.times).reduce((a, b) => a + b, 0);
}

/** Time inside kernels (NumPy calls included), at most the run phase. */
export function kernelSeconds(r: IFuseReport): number {
  const inside = r.kernel_list.reduce((a, k) => a + k.time, 0);
  return typeof r.times.run === 'number' ? Math.min(inside, r.times.run) : inside;
}

/** The cell's time as shares of its total: kernels, compile, load (first use), overhead. */
export function timeShares(r: IFuseReport): [string, number][] {
  const total = totalSeconds(r);
  if (!(total > 0)) {
    return [];
  }
  const parts: [string, number][] = [
    ['kernels', kernelSeconds(r)],
    ['compile', r.times.compile ?? 0],
    ['load', r.times.load ?? 0]
  ];
  const shares = parts
    .filter(([name, v]) => v > 0 || name === 'kernels')
    .map(([name, v]): [string, number] => [name, Math.min(1, v / total)]);
  shares.push(['overhead', Math.max(0, 1 - shares.reduce((a, [, v]) => a + v, 0))]);
  return shares;
}

/** `kernels 62% · overhead 38%`. */
export function sharesText(r: IFuseReport): string {
  return timeShares(r)
    .map(([name, v]) => `${name} ${formatPercent(v)}`)
    .join(' \u00b7 ');
}

/** `"ops -> kernels"`, e.g. `"37 ops → 3 kernels"`. */
export function opsToKernels(r: IFuseReport): string {
  return `${plural(r.ops, 'op')} \u2192 ${plural(r.kernels, 'kernel')}`;
}

/** The badge's label: its status mark, then kernels first, as that is what fusion is about. */
export function badgeText(r: IFuseReport): string {
  const status = runStatus(r);
  const parts = [plural(r.kernels, 'kernel'), plural(r.ops, 'op')];
  if (status === 'fallbacks') {
    parts.unshift(plural(r.fallbacks.length, 'fallback'));
  }
  parts.push(formatSeconds(totalSeconds(r)));
  return `${STATUS_MARK[status]} ${parts.join(' \u00b7 ')}`;
}

/** `cupy --dry-run` for a dry run (its timings are the host's), else the backend. */
export function backendLabel(r: IFuseReport): string {
  return r.options?.dry_run ? `${r.backend} --dry-run` : r.backend;
}

/** The one line a sidebar entry or card header shows, like the start of `Report.summary()`. */
export function summaryLine(r: IFuseReport): string {
  const parts = [`fuse[${backendLabel(r)}]: ${opsToKernels(r)}`];
  if (r.cache !== 'off') {
    parts.push(cachePhrase(r));
  }
  parts.push(formatSeconds(totalSeconds(r)));
  if (r.fallbacks.length) {
    parts.push(plural(r.fallbacks.length, 'fallback'));
  }
  return parts.join(' \u00b7 ');
}

export interface IBreakGroup {
  reason: string;
  count: number;
  lines: number[];
}

/** Breaks grouped by reason, in order of first appearance, with the lines they occur on. */
export function groupBreaks(breaks: readonly IBreakInfo[], r?: IFuseReport): IBreakGroup[] {
  const groups = new Map<string, IBreakGroup>();
  for (const b of breaks) {
    const reason = r ? breakReason(r, b) : b.reason;
    let g = groups.get(reason);
    if (!g) {
      g = { reason, count: 0, lines: [] };
      groups.set(reason, g);
    }
    g.count++;
    if (typeof b.line === 'number' && !g.lines.includes(b.line)) {
      g.lines.push(b.line);
    }
  }
  return [...groups.values()];
}

/** One line per break reason, e.g. `"reduction boundary (line 3) ×2"`. */
export function breakLines(r: IFuseReport): string[] {
  return groupBreaks(r.breaks, r).map(g => {
    const where = formatLines(g.lines);
    return `${g.reason}${where ? ` (${where})` : ''}${g.count > 1 ? ` \u00d7${g.count}` : ''}`;
  });
}

/** The badge's details: the summary, then the fusion breaks by name, then fallbacks, syncs, the cache. */
export function badgeDetails(r: IFuseReport): string[] {
  const out = [summaryLine(r)];
  const breaks = breakLines(r);
  if (breaks.length) {
    out.push(`Fusion breaks (${r.breaks.length}):`);
    out.push(...breaks.map(b => `  \u2022 ${b}`));
  } else {
    out.push('No fusion breaks.');
  }
  for (const f of r.fallbacks) {
    out.push(`Fallback${lineSuffix(f.line)}: ${f.op}: ${f.reason}`);
  }
  for (const s of r.syncs) {
    out.push(`Sync${lineSuffix(s.line)}: ${s.cause}`);
  }
  const reasons = [...new Set(r.miss_reasons)];
  if (reasons.length && r.cache !== 'hit') {
    out.push(`Plan cache (${r.cache}): ${reasons.join('; ')}`);
  }
  if (r.error) {
    out.push(`Error: ${r.error}`);
  }
  return out;
}

/** The badge tooltip: its details as one text. */
export function badgeTooltip(r: IFuseReport): string {
  return badgeDetails(r).join('\n');
}

function lineSuffix(line: number | null | undefined): string {
  return typeof line === 'number' ? ` (line ${line})` : '';
}

/** The compact op list cut at an op, never inside a name: `add, multiply, … (+3 more)`. */
export function opsPreview(ops: readonly string[], width = 48): string {
  const counts = new Map<string, number>();
  for (const op of ops) {
    counts.set(op, (counts.get(op) ?? 0) + 1);
  }
  const items = [...counts].map(([op, n]) => (n === 1 ? op : `${op} \u00d7${n}`));
  const out: string[] = [];
  for (let i = 0; i < items.length; i++) {
    const rest = items.length - i - 1;
    const tail = rest ? `, \u2026 (+${rest} more)` : '';
    if (out.length && [...out, items[i]].join(', ').length + tail.length > width) {
      return `${out.join(', ')}, \u2026 (+${items.length - i} more)`;
    }
    out.push(items[i]);
  }
  return out.join(', ');
}

/** The first non-empty line of a cell's source that is not the `%%fuse` line itself. */
export function sourcePreview(source: string, maxLength = 60): string {
  const line =
    source
      .split('\n')
      .map(l => l.trim())
      .find(l => l && !l.startsWith('%%')) ?? '';
  return line.length > maxLength ? line.slice(0, maxLength - 1) + '\u2026' : line;
}
