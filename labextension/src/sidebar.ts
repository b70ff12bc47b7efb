/**
 * The fusion sidebar: the active notebook's fused cells with their last
 * reports. Clicking an entry selects and scrolls to its cell.
 */
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { badgeTooltip, sourcePreview, summaryLine } from './format';
import { NotebookFuseModel } from './model';
import { IFusedCell } from './outputs';

export const SIDEBAR_ID = 'jupyter-fuse-sidebar';

export const fuseIcon = new LabIcon({
  name: 'jupyter-fuse:icon',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M13 2 4 14h6l-1 8 9-12h-6z"/></svg>'
});

export class FuseSidebar extends Widget {
  constructor() {
    super();
    this.id = SIDEBAR_ID;
    this.addClass('jp-FuseSidebar');
    this.title.icon = fuseIcon;
    this.title.caption = 'Fused cells (jupyter-fuse)';
    const head = document.createElement('div');
    head.className = 'jp-FuseSidebar-header';
    this._title = document.createElement('div');
    this._title.className = 'jp-FuseSidebar-title';
    this._subtitle = document.createElement('div');
    this._subtitle.className = 'jp-FuseSidebar-notebook';
    head.append(this._title, this._subtitle);
    this._list = document.createElement('ul');
    this._list.className = 'jp-FuseSidebar-list';
    this.node.append(head, this._list);
    this._render();
  }

  /** Show this notebook's model (null: no notebook is active). */
  setModel(model: NotebookFuseModel | null): void {
    if (model === this._model) {
      return;
    }
    this._model?.changed.disconnect(this._render, this);
    this._model = model;
    model?.changed.connect(this._render, this);
    this._render();
  }

  get model(): NotebookFuseModel | null {
    return this._model;
  }

  dispose(): void {
    this._model?.changed.disconnect(this._render, this);
    this._model = null;
    super.dispose();
  }

  private _render(): void {
    const model = this._model && !this._model.isDisposed ? this._model : null;
    this._title.textContent = 'Fused cells';
    this._subtitle.textContent = model ? model.panel.context.localPath : 'No notebook is active.';
    const items: HTMLElement[] = [];
    for (const cell of model?.cells ?? []) {
      items.push(this._item(model!, cell));
    }
    if (model && !items.length) {
      const empty = document.createElement('li');
      empty.className = 'jp-FuseSidebar-empty';
      empty.textContent = 'No cell of this notebook was last run with %%fuse.';
      items.push(empty);
    }
    this._list.replaceChildren(...items);
  }

  private _item(model: NotebookFuseModel, cell: IFusedCell): HTMLElement {
    const li = document.createElement('li');
    li.className = 'jp-FuseSidebar-item';
    li.dataset.cellId = cell.id;
    li.dataset.cellIndex = String(cell.index);
    li.tabIndex = 0;
    const head = document.createElement('div');
    head.className = 'jp-FuseSidebar-itemHead';
    head.textContent = `[${cell.executionCount ?? ' '}] cell ${cell.index + 1}`;
    const summary = document.createElement('div');
    summary.className = 'jp-FuseSidebar-summary';
    const preview = document.createElement('code');
    preview.className = 'jp-FuseSidebar-source';
    preview.textContent = sourcePreview(cell.source);
    if (cell.report) {
      summary.textContent = summaryLine(cell.report);
      li.title = badgeTooltip(cell.report);
      li.dataset.kernels = String(cell.report.kernels);
    } else {
      summary.textContent = cell.message ?? '';
      li.classList.add('jp-mod-invalid');
    }
    li.append(head, summary, preview);
    const go = () => scrollToCell(model, cell.id);
    li.addEventListener('click', go);
    li.addEventListener('keydown', e => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        go();
      }
    });
    return li;
  }

  private _model: NotebookFuseModel | null = null;
  private _title: HTMLElement;
  private _subtitle: HTMLElement;
  private _list: HTMLElement;
}

/** Make the cell with this model id the active cell and scroll it into view. */
export function scrollToCell(model: NotebookFuseModel, id: string): void {
  const notebook = model.panel.content;
  const index = notebook.widgets.findIndex(c => c.model.id === id);
  if (index < 0) {
    return;
  }
  notebook.activeCellIndex = index;
  void notebook.scrollToCell(notebook.widgets[index], 'start');
}
