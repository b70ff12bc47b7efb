/**
 * The cell badges: a small label under the input of every cell whose last run
 * was a `%%fuse` run. It reads only the notebook's NotebookFuseModel.
 */
import { Cell } from '@jupyterlab/cells';
import { IDisposable } from '@lumino/disposable';
import { PanelLayout, Widget } from '@lumino/widgets';

import { badgeText, badgeTooltip } from './format';
import { NotebookFuseModel } from './model';
import { IFusedCell } from './outputs';

export const BADGE_CLASS = 'jp-FuseBadge';

/** One badge. Its text and tooltip come from the format helpers. */
export class FuseBadge extends Widget {
  constructor() {
    super();
    this.addClass(BADGE_CLASS);
  }

  setCell(cell: IFusedCell): void {
    const r = cell.report;
    this.toggleClass('jp-mod-invalid', r === null);
    this.toggleClass('jp-mod-error', r !== null && r.error !== null);
    if (r === null) {
      this.node.textContent = '\u26a1 fuse report unreadable';
      this.node.title = cell.message ?? '';
      delete this.node.dataset.kernels;
      return;
    }
    this.node.dataset.kernels = String(r.kernels);
    this.node.dataset.ops = String(r.ops);
    this.node.dataset.cache = r.cache;
    this.node.textContent = `\u26a1 ${badgeText(r)}`;
    this.node.title = badgeTooltip(r);
  }
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
