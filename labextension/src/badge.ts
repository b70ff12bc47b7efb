/**
 * The cell badges: a small label under the input of every cell whose last run
 * was a `%%fuse` run. It reads only the notebook's NotebookFuseModel.
 *
 * A badge is a button: it takes the keyboard focus, and Enter, Space or a
 * click opens its details under it (Escape closes them), so nothing is in a
 * mouse-only tooltip. Its mark and its words say what kind of run it was
 * (fused, replayed, with fallbacks, failed), not its colour alone.
 */
import { Cell } from '@jupyterlab/cells';
import { IDisposable } from '@lumino/disposable';
import { PanelLayout, Widget } from '@lumino/widgets';

import { badgeDetails, badgeText, runStatus, summaryLine } from './format';
import { NotebookFuseModel } from './model';
import { IFusedCell } from './outputs';

export const BADGE_CLASS = 'jp-FuseBadge';
const STATUSES = ['error', 'fallbacks', 'replayed', 'reference', 'no-fuse', 'clean'];

/** One badge: its label button and, when opened, its details. */
export class FuseBadge extends Widget {
  constructor() {
    super();
    this.addClass(BADGE_CLASS);
    this.node.dataset.lmSuppressShortcuts = 'true'; // Enter and Escape are the badge's, not the notebook's
    this._label = document.createElement('button');
    this._label.className = 'jp-FuseBadge-label';
    this._label.type = 'button';
    this._details = document.createElement('div');
    this._details.className = 'jp-FuseBadge-details';
    this._details.setAttribute('role', 'region');
    this._details.hidden = true;
    this._details.id = `jp-FuseBadge-details-${++FuseBadge._count}`;
    this._label.setAttribute('aria-controls', this._details.id);
    this._label.setAttribute('aria-expanded', 'false');
    this._label.addEventListener('click', () => this.toggle());
    this.node.addEventListener('keydown', e => {
      if (e.key === 'Escape' && !this._details.hidden) {
        e.stopPropagation();
        this.toggle(false);
        this._label.focus();
      }
    });
    this.node.append(this._label, this._details);
  }

  /** The focusable element (tests and the sidebar move focus here). */
  get label(): HTMLButtonElement {
    return this._label;
  }

  /** Open (true), close (false) or flip the details. */
  toggle(open?: boolean): void {
    const show = open ?? this._details.hidden;
    this._details.hidden = !show;
    this._label.setAttribute('aria-expanded', String(show));
    this.toggleClass('jp-mod-open', show);
  }

  setCell(cell: IFusedCell): void {
    const r = cell.report;
    this.toggleClass('jp-mod-invalid', r === null);
    for (const s of STATUSES) {
      this.removeClass(`jp-mod-${s}`);
    }
    if (r === null) {
      this._label.textContent = '\u26a1 fuse report unreadable';
      this._label.title = cell.message ?? '';
      this._label.setAttribute('aria-label', `jupyter-fuse: ${cell.message ?? 'report unreadable'}`);
      this._details.replaceChildren(line(cell.message ?? ''));
      delete this.node.dataset.kernels;
      return;
    }
    const status = runStatus(r);
    this.addClass(`jp-mod-${status}`);
    this.node.dataset.kernels = String(r.kernels);
    this.node.dataset.ops = String(r.ops);
    this.node.dataset.cache = r.cache;
    this.node.dataset.status = status;
    this._label.textContent = badgeText(r);
    const details = badgeDetails(r);
    this._label.title = details.join('\n');
    this._label.setAttribute('aria-label', `jupyter-fuse: ${summaryLine(r)}. Press Enter for details.`);
    this._details.replaceChildren(...details.map(line));
  }

  private _label: HTMLButtonElement;
  private _details: HTMLDivElement;
  private static _count = 0;
}

function line(text: string): HTMLElement {
  const node = document.createElement('div');
  node.textContent = text;
  return node;
}

/** Keeps one notebook's badges in step with its model. */
export class BadgeView implements IDisposable {
  constructor(private readonly _model: NotebookFuseModel) {
    _model.changed.connect(this._update, this);
    this._update();
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._model.changed.disconnect(this._update, this);
    this._badges.forEach(b => b.dispose());
    this._badges.clear();
  }

  private _update(): void {
    if (this._disposed) {
      return;
    }
    const seen = new Set<Cell>();
    for (const cell of this._model.panel.content.widgets) {
      const fused = this._model.cell(cell.model.id);
      if (!fused) {
        continue;
      }
      seen.add(cell);
      let badge = this._badges.get(cell);
      if (!badge || badge.isDisposed) {
        badge = new FuseBadge();
        this._badges.set(cell, badge);
        const b = badge;
        // A cell builds its DOM lazily (windowed notebooks): attach when ready.
        void cell.ready.then(() => attach(cell, b));
        cell.disposed.connect(() => {
          b.dispose();
          this._badges.delete(cell);
        });
      }
      badge.setCell(fused);
    }
    this._badges.forEach((badge, cell) => {
      if (!seen.has(cell)) {
        badge.dispose();
        this._badges.delete(cell);
      }
    });
  }

  private _badges = new Map<Cell, FuseBadge>();
  private _disposed = false;
}

/** Put the badge right after the cell's input, or at the end of the cell. */
function attach(cell: Cell, badge: FuseBadge): void {
  if (badge.isDisposed || cell.isDisposed || badge.parent) {
    return;
  }
  const layout = cell.layout as PanelLayout | null;
  if (!layout) {
    return;
  }
  const i = layout.widgets.findIndex(w => w.hasClass('jp-Cell-inputWrapper'));
  if (i >= 0) {
    layout.insertWidget(i + 1, badge);
  } else {
    layout.addWidget(badge);
  }
}
