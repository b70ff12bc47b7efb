/**
 * A reopened notebook shows its reports, not "Error displaying widget".
 *
 * A `%%fuse` output carries the live panel (an ipywidgets view) and, in the
 * same bundle, the report card data and the static HTML. After a save, a
 * kernel shutdown and a reload the panel's widget model is gone, and
 * ipywidgets' renderer only says "Error displaying widget: model not found".
 * This watches the widget renderers a notebook creates: when one of ours fails
 * that way, it renders the bundle's next best type (the card, or the HTML)
 * in its place. Other widgets are left alone.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

import { MIME_TYPE } from './types';

export const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';
export const FALLBACK_CLASS = 'jp-FuseFallback';
const PATCHED = Symbol('jupyter-fuse-fallback');

/** What this needs of a notebook's IRenderMimeRegistry. */
export interface IRendererRegistry {
  createRenderer(mimeType: string): IRenderMime.IRenderer;
  preferredMimeType(bundle: IRenderMime.IMimeModel['data'], safe?: 'ensure' | 'prefer' | 'any'): string | undefined;
}

/** Is this bundle one of ours (a cell panel or the session dashboard)? */
export function isFuseBundle(data: IRenderMime.IMimeModel['data']): boolean {
  const html = data['text/html'];
  return MIME_TYPE in data || (typeof html === 'string' && html.includes('jupyter-fuse'));
}

/** Did ipywidgets' renderer give up (it marks itself and leaves only its message)? */
export function widgetFailed(renderer: Widget): boolean {
  return renderer.hasClass('jupyter-widgets') && renderer.node.children.length === 0;
}

/** Make the notebook's renderers of widget views fall back to our bundle's card or HTML. */
export function installWidgetFallback(rendermime: IRendererRegistry): void {
  const registry = rendermime as IRendererRegistry & { [PATCHED]?: boolean };
  if (registry[PATCHED]) {
    return;
  }
  registry[PATCHED] = true;
  const create = rendermime.createRenderer.bind(rendermime);
  rendermime.createRenderer = (mimeType: string) => {
    const renderer = create(mimeType);
    if (mimeType === WIDGET_MIME) {
      watch(renderer, rendermime, create);
    }
    return renderer;
  };
}

function watch(
  renderer: IRenderMime.IRenderer,
  rendermime: IRendererRegistry,
  create: (mimeType: string) => IRenderMime.IRenderer
): void {
  const render = renderer.renderModel.bind(renderer);
  renderer.renderModel = async (model: IRenderMime.IMimeModel) => {
    await render(model);
    if (!isFuseBundle(model.data)) {
      return;
    }
    // the renderer may only give up later (when the widget manager has restored): watch it until then
    const check = (): boolean => {
      if (renderer.isDisposed || !widgetFailed(renderer)) {
        return false;
      }
      void showFallback(renderer, model, rendermime, create);
      return true;
    };
    if (!check()) {
      const observer = new MutationObserver(() => check() && observer.disconnect());
      observer.observe(renderer.node, { attributes: true, attributeFilter: ['class'], childList: true });
      renderer.disposed.connect(() => observer.disconnect());
    }
  };
}

async function showFallback(
  renderer: IRenderMime.IRenderer,
  model: IRenderMime.IMimeModel,
  rendermime: IRendererRegistry,
  create: (mimeType: string) => IRenderMime.IRenderer
): Promise<void> {
  const data = { ...model.data };
  delete data[WIDGET_MIME];
  const mimeType = rendermime.preferredMimeType(data, model.trusted ? 'any' : 'ensure');
  if (!mimeType) {
    return;
  }
  const fallback = create(mimeType);
  await fallback.renderModel({
    data,
    metadata: model.metadata,
    trusted: model.trusted,
    setData: () => undefined
  });
  renderer.node.textContent = '';
  renderer.removeClass('jupyter-widgets');
  renderer.addClass(FALLBACK_CLASS);
  if (renderer instanceof Panel) {
    renderer.addWidget(fallback);
  } else {
    renderer.node.append(fallback.node);
  }
}
