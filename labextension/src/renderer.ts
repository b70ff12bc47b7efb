/** The MIME renderer for `application/vnd.jupyter-fuse.report+json`. */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { renderCard, renderMessage } from './card';
import { parseReport } from './schema';
import { MIME_TYPE } from './types';

export class ReportRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass('jp-FuseRenderer');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    let content: HTMLElement;
    try {
      const parsed = parseReport(model.data[this._mimeType]);
      content = parsed.ok ? renderCard(parsed.report) : renderMessage(parsed.message);
    } catch (e) {
      // Never let a bad report break the output area.
      content = renderMessage(`jupyter-fuse: cannot show this report (${String(e)})`);
    }
    this.node.replaceChildren(content);
    return Promise.resolve();
  }

  private _mimeType: string;
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  createRenderer: options => new ReportRenderer(options)
};
