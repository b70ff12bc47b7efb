/**
 * jupyter-fuse: wires the model and the views into JupyterLab / Notebook 7.
 * The MIME card is a separate entry point (mime.ts).
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { BadgeView } from './badge';
import { installWidgetFallback } from './fallback';
import { highlightOnClick } from './highlight';
import { FuseRegistry } from './model';
import { FuseSidebar, SIDEBAR_ID } from './sidebar';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-fuse:plugin',
  description: 'Badges on %%fuse cells, a sidebar of fused cells, line highlights, reports in reopened notebooks.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ILayoutRestorer],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker, restorer: ILayoutRestorer | null) => {
    const registry = new FuseRegistry(tracker);
    const sidebar = new FuseSidebar();

    // Before a notebook renders its outputs: a panel whose widget is gone shows its report instead.
    const prepare = (panel: NotebookPanel) => {
      installWidgetFallback(panel.content.rendermime);
      const highlighter = highlightOnClick(panel);
      panel.disposed.connect(() => highlighter.dispose());
    };
    tracker.widgetAdded.connect((_, panel) => prepare(panel));
    tracker.forEach(prepare);

    registry.added.connect((_, model) => {
      const badges = new BadgeView(model);
      model.panel.disposed.connect(() => badges.dispose());
    });
    registry.currentChanged.connect((_, model) => sidebar.setModel(model));
    registry.start();
    sidebar.setModel(registry.current);

    app.shell.add(sidebar, 'right', { rank: 900 });
    restorer?.add(sidebar, SIDEBAR_ID); // JupyterLab reopens it if it was open
    app.commands.addCommand('jupyter-fuse:show-sidebar', {
      label: 'Show Fused Cells',
      execute: () => app.shell.activateById(SIDEBAR_ID)
    });
  }
};

export default plugin;
