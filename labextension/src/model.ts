/**
 * State: which cells of a notebook were last run under `%%fuse`, with their
 * reports. One model per open notebook; the registry knows the current one.
 * Views listen to the `changed` signals and never read outputs themselves.
 */
import { ICodeCellModel } from '@jupyterlab/cells';
import { INotebookModel, INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { collectFusedCells, fusedCellKey, ICellLike, IFusedCell, IOutputLike } from './outputs';

/** The fused cells of one notebook, kept up to date with its outputs. */
export class NotebookFuseModel implements IDisposable {
  constructor(readonly panel: NotebookPanel) {
    panel.content.modelChanged.connect(this._onModelChanged, this);
    this._onModelChanged();
  }

  /** Emitted after the fused cells (or any report among them) changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The fused cells, in notebook order. */
  get cells(): readonly IFusedCell[] {
    return this._cells;
  }

  /** The fused cell with this cell-model id, if its last run was a %%fuse run. */
  cell(id: string): IFusedCell | undefined {
    return this._byId.get(id);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    clearTimeout(this._timer);
    Signal.clearData(this);
  }

  private _onModelChanged(): void {
    const model = this.panel.content.model;
    if (model === this._notebookModel) {
      return;
    }
    if (this._notebookModel) {
      this._notebookModel.cells.changed.disconnect(this._schedule, this);
    }
    this._notebookModel = model;
    if (model) {
      model.cells.changed.connect(this._schedule, this);
    }
    this._schedule();
  }

  /** Coalesce bursts of output changes (a run clears, then streams) into one update. */
  private _schedule(): void {
    if (this._disposed || this._timer !== undefined) {
      return;
    }
    this._timer = setTimeout(() => {
      this._timer = undefined;
      this._refresh();
    }, 0);
  }

  private _refresh(): void {
    if (this._disposed) {
      return;
    }
    const model = this._notebookModel;
    const cells: ICellLike[] = [];
    if (model) {
      for (let i = 0; i < model.cells.length; i++) {
        const cell = model.cells.get(i);
        let outputs: IOutputLike[] = [];
        let executionCount: number | null = null;
        if (cell.type === 'code') {
          const code = cell as ICodeCellModel;
          // Signal.connect ignores a connection that already exists.
          code.outputs.changed.connect(this._schedule, this);
          code.outputs.stateChanged.connect(this._schedule, this);
          outputs = [];
          for (let j = 0; j < code.outputs.length; j++) {
            outputs.push({ data: code.outputs.get(j).data as { [mime: string]: unknown } });
          }
          executionCount = code.executionCount;
        }
        cells.push({
          id: cell.id,
          type: cell.type,
          source: cell.sharedModel.getSource(),
          executionCount,
          outputs
        });
      }
    }
    const next = collectFusedCells(cells);
    const key = next.map(fusedCellKey).join('\n');
    if (key === this._key) {
      return;
    }
    this._key = key;
    this._cells = next;
    this._byId = new Map(next.map(c => [c.id, c]));
    this._changed.emit();
  }

  private _notebookModel: INotebookModel | null = null;
  private _cells: IFusedCell[] = [];
  private _byId = new Map<string, IFusedCell>();
  private _key = '';
  private _timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private _disposed = false;
  private _changed = new Signal<this, void>(this);
}

/** One model per open notebook, and which one belongs to the active notebook. */
export class FuseRegistry implements IDisposable {
  constructor(private readonly _tracker: INotebookTracker) {}

  /** Start following the tracker; `added` fires for notebooks already open too. */
  start(): void {
    this._tracker.widgetAdded.connect((_, panel) => this._add(panel), this);
    this._tracker.currentChanged.connect(() => this._currentChanged.emit(this.current), this);
    this._tracker.forEach(panel => this._add(panel));
  }

  /** Emitted with a new model for each notebook that opens. */
  get added(): ISignal<this, NotebookFuseModel> {
    return this._added;
  }

  /** Emitted when the active notebook changes (null: none). */
  get currentChanged(): ISignal<this, NotebookFuseModel | null> {
    return this._currentChanged;
  }

  /** The model of the active notebook. */
  get current(): NotebookFuseModel | null {
    const panel = this._tracker.currentWidget;
    return panel ? (this._models.get(panel) ?? null) : null;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._models.forEach(m => m.dispose());
    this._models.clear();
    Signal.clearData(this);
  }

  private _add(panel: NotebookPanel): void {
    if (this._models.has(panel)) {
      return;
    }
    const model = new NotebookFuseModel(panel);
    this._models.set(panel, model);
    panel.disposed.connect(() => {
      this._models.delete(panel);
      model.dispose();
    });
    this._added.emit(model);
    if (panel === this._tracker.currentWidget) {
      this._currentChanged.emit(model);
    }
  }

  private _models = new Map<NotebookPanel, NotebookFuseModel>();
  private _disposed = false;
  private _added = new Signal<this, NotebookFuseModel>(this);
  private _currentChanged = new Signal<this, NotebookFuseModel | null>(this);
}
