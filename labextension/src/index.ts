/**
 * jupyter-fuse: wires the model and the views into JupyterLab / Notebook 7.
 * The MIME card is a separate entry point (mime.ts).
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import { BadgeView } from './badge';
import { FuseRegistry } from './model';
import { FuseSidebar, SIDEBAR_ID } from './sidebar';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-fuse:plugin',
  description: 'Badges on %%fuse cells and a sidebar of fused cells.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ILayoutRestorer],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker, restorer: ILayoutRestorer | null) => {
    const registry = new FuseRegistry(tracker);
    const sidebar = new FuseSidebar();

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
