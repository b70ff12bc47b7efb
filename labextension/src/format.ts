/**
 * Text for the views: numbers, summaries, badge labels and tooltips.
 * Pure: no DOM, no JupyterLab.
 */
import { IBreakInfo, IFuseReport } from './types';

/** `0.0042` seconds -> `"4.2 ms"`; under 1 ms keeps two digits, over 10 s shows seconds. */
export function formatSeconds(seconds: number): string {
  if (!isFinite(seconds) || seconds < 0) {
    return '?';
  }
  const ms = seconds * 1e3;
  if (ms >= 10000) {
    return `${seconds.toFixed(1)} s`;
  }
  if (ms < 1) {
    return `${ms.toFixed(2)} ms`;
  }
  return `${ms.toFixed(1)} ms`;
}

/** Bytes the way report.py prints them: `"512 B"`, `"1.5 KiB"`, `"3.0 MiB"`. */
export function formatBytes(n: number): string {
  if (!isFinite(n) || n < 0) {
    return '?';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${Math.round(n)} B` : `${n.toFixed(1)} ${units[i]}`;
}

/** `plural(1, "kernel")` -> `"1 kernel"`, `plural(3, "kernel")` -> `"3 kernels"`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The total run time of a report: `times.total`, else the sum of the phases. */
export function totalSeconds(r: IFuseReport): number {
  if (typeof r.times.total === 'number') {
    return r.times.total;
  }
  return Object.values(r.times).reduce((a, b) => a + b, 0);
}

/** `"ops -> kernels"`, e.g. `"37 ops -> 3 kernels"`. */
export function opsToKernels(r: IFuseReport): string {
  return `${plural(r.ops, 'op')} \u2192 ${plural(r.kernels, 'kernel')}`;
}

/** The badge's label: kernels first, as that is what fusion is about. */
export function badgeText(r: IFuseReport): string {
  const parts = [plural(r.kernels, 'kernel'), plural(r.ops, 'op')];
  if (r.cache !== 'off') {
    parts.push(`cache ${r.cache}`);
  }
  parts.push(formatSeconds(totalSeconds(r)));
  if (r.error) {
    parts.push('error');
  }
  return parts.join(' \u00b7 ');
}

/** `cupy --dry-run` for a dry run (its timings are the host's), else the backend. */
export function backendLabel(r: IFuseReport): string {
  return r.options?.dry_run ? `${r.backend} --dry-run` : r.backend;
}

/** The one line a sidebar entry or card header shows, like `Report.summary()`. */
export function summaryLine(r: IFuseReport): string {
  const parts = [`fuse[${backendLabel(r)}]: ${opsToKernels(r)}`];
  if (r.cache !== 'off') {
    parts.push(`cache ${r.cache}`);
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
export function groupBreaks(breaks: readonly IBreakInfo[]): IBreakGroup[] {
  const groups = new Map<string, IBreakGroup>();
  for (const b of breaks) {
    let g = groups.get(b.reason);
    if (!g) {
      g = { reason: b.reason, count: 0, lines: [] };
      groups.set(b.reason, g);
    }
    g.count++;
    if (typeof b.line === 'number' && !g.lines.includes(b.line)) {
      g.lines.push(b.line);
    }
  }
  return [...groups.values()];
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

/** One line per break reason, e.g. `"reduction boundary (line 3) x2"`. */
export function breakLines(r: IFuseReport): string[] {
  return groupBreaks(r.breaks).map(g => {
    const where = formatLines(g.lines);
    return `${g.reason}${where ? ` (${where})` : ''}${g.count > 1 ? ` \u00d7${g.count}` : ''}`;
  });
}

/** The badge tooltip: the summary, then the fusion breaks by name, then fallbacks and syncs. */
export function badgeTooltip(r: IFuseReport): string {
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
  if (r.miss_reasons.length) {
    out.push(`Cache miss: ${r.miss_reasons.join('; ')}`);
  }
  if (r.error) {
    out.push(`Error: ${r.error}`);
  }
  return out.join('\n');
}

function lineSuffix(line: number | null | undefined): string {
  return typeof line === 'number' ? ` (line ${line})` : '';
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
