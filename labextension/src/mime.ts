/** The MIME extension entry point (package.json `jupyterlab.mimeExtension`). */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { rendererFactory } from './renderer';
import { MIME_TYPE } from './types';

const extension: IRenderMime.IExtension = {
  id: 'jupyter-fuse:report-renderer',
  description: 'Shows a jupyter_fuse Report as a compact card.',
  rendererFactory,
  // Preferred over the bundle's text/html (rank 50) and text/plain.
  rank: 10,
  dataType: 'json',
  fileTypes: [],
  documentWidgetFactoryOptions: []
};

export default extension;
export { MIME_TYPE };
