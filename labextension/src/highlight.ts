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
import { DisposableDelegate, IDisposable } from '@lumino/disposable';

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
export function highlightOnClick(panel: NotebookPanel): IDisposable {
  let last: Element | null = null;
  let lastCell: Cell | null = null;
  const onEvent = (event: Event): void => {
    if (event instanceof KeyboardEvent && event.key !== 'Enter') {
      return;
    }
    const target = (event.target as HTMLElement | null)?.closest?.(`[${LINES_ATTR}]`);
    const cell = target && panel.content.widgets.find(c => c.node.contains(target));
    if (!target || !cell) {
      return;
    }
    const again = last === target;
    last?.classList.remove('jp-mod-highlighting');
    if (lastCell && lastCell !== cell && !lastCell.isDisposed) {
      highlightLines(lastCell, []); // one highlighted kernel at a time
    }
    highlightLines(cell, again ? [] : parseLines(target.getAttribute(LINES_ATTR)));
    target.classList.toggle('jp-mod-highlighting', !again);
    last = again ? null : target;
    lastCell = cell;
  };
  const node = panel.content.node;
  node.addEventListener('click', onEvent);
  node.addEventListener('keydown', onEvent);
  return new DisposableDelegate(() => {
    node.removeEventListener('click', onEvent);
    node.removeEventListener('keydown', onEvent);
  });
}
