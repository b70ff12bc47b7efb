/**
 * Click a kernel, see its lines: an element of a cell's output that names
 * cell lines (`data-fuse-lines="2,3"`: a kernel row of the card, of the
 * panel's table or of the static HTML) highlights those lines in that cell's
 * editor, until the next click (the same row again clears them).
 *
 * The highlight is a CodeMirror line decoration injected into the cell's
 * editor, so it survives the editor redrawing its lines.
 */
import { StateEffect, StateField } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView } from '@codemirror/view';
import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';

import { LINES_ATTR } from './types';

export const HIGHLIGHT_CLASS = 'jp-FuseLine-highlight';

const setLines = StateEffect.define<number[]>();

const linesField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const effect of tr.effects) {
      if (effect.is(setLines)) {
        const doc = tr.state.doc;
        const marks = effect.value
          .filter(n => n >= 1 && n <= doc.lines)
          .sort((a, b) => a - b)
          .map(n => Decoration.line({ class: HIGHLIGHT_CLASS }).range(doc.line(n).from));
        deco = Decoration.set(marks);
      }
    }
    return deco;
  },
  provide: field => EditorView.decorations.from(field)
});

/** What this needs of JupyterLab's CodeMirror editor. */
interface IInjectable {
  editor: EditorView;
  injectExtension(ext: unknown): void;
}

const injected = new WeakSet<EditorView>();

/** Highlight ``lines`` (1-based, as the editor numbers them) in the cell's editor; [] clears. */
export function highlightLines(cell: Cell, lines: number[]): boolean {
  const editor = cell.editor as unknown as IInjectable | null;
  if (!editor || typeof editor.injectExtension !== 'function' || !editor.editor) {
    return false;
  }
  const view = editor.editor;
  if (!injected.has(view)) {
    editor.injectExtension(linesField);
    injected.add(view);
  }
  view.dispatch({ effects: setLines.of(lines) });
  return true;
}

/** `"2,3"` -> `[2, 3]`. */
export function parseLines(text: string | null): number[] {
  return (text ?? '')
    .split(',')
    .map(s => parseInt(s, 10))
    .filter(n => Number.isInteger(n) && n > 0);
}

/** Listens for clicks (and Enter) on line-naming elements in one notebook's outputs. */
export class LineHighlighter implements IDisposable {
  constructor(private readonly _panel: NotebookPanel) {
    this._onEvent = this._onEvent.bind(this);
    _panel.content.node.addEventListener('click', this._onEvent);
    _panel.content.node.addEventListener('keydown', this._onEvent);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._panel.content.node.removeEventListener('click', this._onEvent);
    this._panel.content.node.removeEventListener('keydown', this._onEvent);
  }

  private _onEvent(event: Event): void {
    if (event instanceof KeyboardEvent && event.key !== 'Enter') {
      return;
    }
    const target = (event.target as HTMLElement | null)?.closest?.(`[${LINES_ATTR}]`);
    if (!target) {
      return;
    }
    const cell = this._panel.content.widgets.find(c => c.node.contains(target));
    if (!cell) {
      return;
    }
    const again = this._last === target;
    this._last?.classList.remove('jp-mod-highlighting');
    if (this._lastCell && this._lastCell !== cell && !this._lastCell.isDisposed) {
      highlightLines(this._lastCell, []); // one highlighted kernel at a time
    }
    highlightLines(cell, again ? [] : parseLines(target.getAttribute(LINES_ATTR)));
    if (again) {
      this._last = null;
    } else {
      target.classList.add('jp-mod-highlighting');
      this._last = target;
    }
    this._lastCell = cell;
  }

  private _last: Element | null = null;
  private _lastCell: Cell | null = null;
  private _disposed = false;
}
