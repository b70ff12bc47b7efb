/**
 * The report card: a compact DOM view of one Report, shown by the MIME
 * renderer. Text only (textContent), so it is safe for untrusted notebooks.
 */
import {
  backendLabel,
  breakLines,
  formatBytes,
  formatLines,
  formatSeconds,
  opsToKernels,
  plural,
  totalSeconds
} from './format';
import { IFuseReport } from './types';

export const CARD_CLASS = 'jp-FuseCard';

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
  const card = el('div', CARD_CLASS);
  card.dataset.kernels = String(r.kernels);
  card.dataset.ops = String(r.ops);

  const head = el('div', 'jp-FuseCard-head');
  head.append(
    el('span', 'jp-FuseCard-backend', `fuse[${backendLabel(r)}]`),
    el('span', 'jp-FuseCard-headline', opsToKernels(r))
  );
  card.append(head);

  const stats = el('div', 'jp-FuseCard-stats');
  stats.append(
    stat('cache', r.cache, `jp-FuseCache-${r.cache.replace(/[^a-z0-9-]/gi, '')}`),
    stat('time', formatSeconds(totalSeconds(r))),
    stat('moved', formatBytes(r.bytes_moved))
  );
  if (r.bytes_h2d || r.bytes_d2h) {
    stats.append(stat('h2d', formatBytes(r.bytes_h2d)), stat('d2h', formatBytes(r.bytes_d2h)));
  }
  for (const phase of ['trace', 'compile', 'run']) {
    if (r.times[phase]) {
      stats.append(stat(phase, formatSeconds(r.times[phase])));
    }
  }
  card.append(stats);

  if (r.error) {
    card.append(el('div', 'jp-FuseCard-error', `error: ${r.error}`));
  }

  if (r.kernel_list.length) {
    const details = el('details', 'jp-FuseCard-kernels');
    details.append(el('summary', '', plural(r.kernel_list.length, 'kernel')));
    const table = el('table', '');
    const shown = r.kernel_list.slice(0, 50);
    for (const k of shown) {
      const row = el('tr', '');
      row.append(
        el('td', 'jp-FuseCard-kname', k.name),
        el('td', 'jp-FuseCard-kops', k.ops.join(', ')),
        el('td', '', formatLines(k.lines)),
        el('td', '', `${formatBytes(k.bytes_read)} in, ${formatBytes(k.bytes_written)} out`),
        el('td', '', formatSeconds(k.time))
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
  for (const m of r.miss_reasons) {
    notes.push(`cache miss: ${m}`);
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
