/**
 * The report card: a compact DOM view of one Report, shown by the MIME
 * renderer (and in place of a panel whose widget is gone, see fallback.ts).
 * Text only (textContent), so it is safe for untrusted notebooks. Colours come
 * from JupyterLab's theme variables (style/base.css). A kernel row names its
 * cell lines in `data-fuse-lines`: clicking it highlights them (highlight.ts).
 */
import {
  backendLabel,
  boundWritesText,
  breakLines,
  FIRST_RUN,
  cachePhrase,
  formatBytes,
  formatLines,
  formatRate,
  formatSeconds,
  kernelLabel,
  opsToKernels,
  plural,
  runStatus,
  sharesText,
  totalSeconds
} from './format';
import { IFuseReport, LINES_ATTR } from './types';

export const CARD_CLASS = 'jp-FuseCard';
const PHASES = ['load', 'guard', 'trace', 'plan', 'compile', 'run'];

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function stat(label: string, value: string, cls = ''): HTMLElement {
  const node = el('span', `jp-FuseCard-stat ${cls}`.trim());
  node.append(el('span', 'jp-FuseCard-statLabel', label), el('span', 'jp-FuseCard-statValue', value));
  return node;
}

/** The card for a readable report. */
export function renderCard(r: IFuseReport): HTMLElement {
  const card = el('div', `${CARD_CLASS} jp-mod-${runStatus(r)}`);
  card.dataset.kernels = String(r.kernels);
  card.dataset.ops = String(r.ops);

  const head = el('div', 'jp-FuseCard-head');
  head.append(
    el('span', 'jp-FuseCard-backend', `fuse[${backendLabel(r)}]`),
    el('span', 'jp-FuseCard-headline', opsToKernels(r))
  );
  card.append(head);

  const stats = el('div', 'jp-FuseCard-stats');
  if (r.cache !== 'off') {
    stats.append(stat('cache', cachePhrase(r), `jp-FuseCache-${r.cache.replace(/[^a-z0-9-]/gi, '')}`));
  }
  stats.append(stat('total', formatSeconds(totalSeconds(r))), stat('moved', formatBytes(r.bytes_moved)));
  if (r.bytes_h2d || r.bytes_d2h) {
    stats.append(stat('h2d', formatBytes(r.bytes_h2d)), stat('d2h', formatBytes(r.bytes_d2h)));
  }
  card.append(stats);

  const phases = el('div', 'jp-FuseCard-stats jp-FuseCard-phases');
  for (const phase of PHASES) {
    if (phase in r.times && (phase !== 'load' || r.times.load)) {
      phases.append(stat(phase === 'load' ? 'first use' : phase, formatSeconds(r.times[phase])));
    }
  }
  phases.append(stat('time went to', sharesText(r)));
  if (r.options?.dry_run) {
    phases.append(stat('note', 'dry run: times are NumPy\u2019s on the host'));
  }
  card.append(phases);

  if (r.error) {
    card.append(el('div', 'jp-FuseCard-error', `error: ${r.error}`));
  }

  if (r.kernel_list.length) {
    const details = el('details', 'jp-FuseCard-kernels');
    details.append(el('summary', '', `${plural(r.kernel_list.length, 'kernel')} (click one to see its lines)`));
    const table = el('table', '');
    const shown = r.kernel_list.slice(0, 50);
    for (const k of shown) {
      const row = el('tr', 'jp-FuseCard-kernel');
      row.setAttribute(LINES_ATTR, k.lines.join(','));
      row.tabIndex = 0;
      row.title = `highlight ${formatLines(k.lines) || 'its lines'} in the cell`;
      const moved = k.bytes_read + k.bytes_written;
      row.append(
        el('td', 'jp-FuseCard-kname', kernelLabel(k)),
        el('td', 'jp-FuseCard-kops', k.ops.join(', ')),
        el('td', '', formatLines(k.lines)),
        el('td', '', `${formatBytes(k.bytes_read)} in, ${formatBytes(k.bytes_written)} out`),
        el('td', '', formatSeconds(k.time)),
        el('td', '', k.time > 0 && moved ? formatRate(moved / k.time) : '')
      );
      table.append(row);
    }
    details.append(table);
    if (r.kernel_list.length > shown.length) {
      details.append(el('div', '', `\u2026 and ${r.kernel_list.length - shown.length} more`));
    }
    card.append(details);
  }

  const notes: string[] = [];
  for (const b of breakLines(r)) {
    notes.push(`break: ${b}`);
  }
  for (const f of r.fallbacks) {
    notes.push(`fallback${typeof f.line === 'number' ? ` (line ${f.line})` : ''}: ${f.op}: ${f.reason}`);
  }
  for (const s of r.syncs) {
    notes.push(`sync${typeof s.line === 'number' ? ` (line ${s.line})` : ''}: ${s.cause}`);
  }
  const bound = boundWritesText(r);
  if (bound) {
    notes.push(bound);
  }
  if (r.cache === 'unreplayable' || r.cache === 'miss') {
    for (const m of new Set(r.miss_reasons)) {
      if (!m.startsWith(FIRST_RUN)) {
        notes.push(`plan cache: ${m}`); // a first run is said once, in the cache stat
      }
    }
  }
  if (notes.length) {
    const ul = el('ul', 'jp-FuseCard-notes');
    for (const n of notes.slice(0, 20)) {
      ul.append(el('li', '', n));
    }
    if (notes.length > 20) {
      ul.append(el('li', '', `\u2026 and ${notes.length - 20} more`));
    }
    card.append(ul);
  }
  return card;
}

/** What is shown instead of a card when the report cannot be read. */
export function renderMessage(message: string): HTMLElement {
  const node = el('div', `${CARD_CLASS} jp-FuseCard-invalid`);
  node.setAttribute('role', 'alert');
  node.textContent = message;
  return node;
}
