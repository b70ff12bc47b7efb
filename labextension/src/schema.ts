/**
 * Reading a report out of a MIME bundle. Pure: no DOM, no JupyterLab.
 *
 * Anything that is not a schema-1 report becomes a readable message, never
 * an exception: the views show that message instead of a broken page.
 */
import {
  IBoundWrite,
  IBreakInfo,
  IFallbackInfo,
  IFuseReport,
  IKernelInfo,
  ISyncInfo,
  ParseResult,
  SUPPORTED_SCHEMAS
} from './types';

const PREFIX = 'jupyter-fuse: ';

class ReportError extends Error {}

function fail(message: string): never {
  throw new ReportError(message);
}

function typeName(v: unknown): string {
  if (v === null) {
    return 'null';
  }
  return Array.isArray(v) ? 'array' : typeof v;
}

function isObject(v: unknown): v is { [key: string]: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(d: { [key: string]: unknown }, key: string, fallback?: number): number {
  const v = d[key];
  if (v === undefined && fallback !== undefined) {
    return fallback;
  }
  if (typeof v !== 'number' || !isFinite(v)) {
    fail(`malformed report: "${key}" should be a number, got ${typeName(v)}`);
  }
  return v;
}

function str(d: { [key: string]: unknown }, key: string, fallback: string): string {
  const v = d[key];
  if (v === undefined || v === null) {
    return fallback;
  }
  return typeof v === 'string' ? v : String(v);
}

function list<T>(
  d: { [key: string]: unknown },
  key: string,
  item: (v: unknown, i: number) => T
): T[] {
  const v = d[key];
  if (v === undefined || v === null) {
    return [];
  }
  if (!Array.isArray(v)) {
    fail(`malformed report: "${key}" should be a list, got ${typeName(v)}`);
  }
  return v.map(item);
}

function entry(key: string, v: unknown, i: number): { [key: string]: unknown } {
  if (!isObject(v)) {
    fail(`malformed report: ${key}[${i}] should be an object, got ${typeName(v)}`);
  }
  return v;
}

function optLine(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}

function numbers(v: unknown): number[] {
  return Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : [];
}

/**
 * Read a report from the value a MIME bundle holds for our MIME type.
 *
 * The value is normally a JSON object; a string is parsed as JSON first (a
 * kernel may send the report serialized), and anything unreadable yields
 * `{ok: false, message}`.
 */
export function parseReport(data: unknown): ParseResult {
  try {
    return { ok: true, report: readReport(data) };
  } catch (e) {
    if (e instanceof ReportError) {
      return { ok: false, message: PREFIX + e.message };
    }
    return { ok: false, message: PREFIX + `cannot read this report (${String(e)})` };
  }
}

function readReport(data: unknown): IFuseReport {
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch (e) {
      fail(`the report is not valid JSON (${(e as Error).message})`);
    }
  }
  if (!isObject(data)) {
    fail(`the report should be a JSON object, got ${typeName(data)}`);
  }
  const d = data;
  if (d.schema === undefined) {
    fail('this output has no report schema version, so it cannot be shown');
  }
  if (typeof d.schema !== 'number' || !SUPPORTED_SCHEMAS.includes(d.schema)) {
    fail(
      `report schema ${JSON.stringify(d.schema)} is not supported: this extension ` +
        `reads schema ${SUPPORTED_SCHEMAS.join(', ')}. Install matching versions of ` +
        'jupyter_fuse and its JupyterLab extension, then re-run the cell.'
    );
  }
  const kernelList = list(d, 'kernel_list', (v, i): IKernelInfo => {
    const k = entry('kernel_list', v, i);
    const launches = k.launches;
    return {
      name: str(k, 'name', `k${i}`),
      kind: str(k, 'kind', ''),
      ops: Array.isArray(k.ops) ? k.ops.map(String) : [],
      lines: numbers(k.lines),
      bytes_read: num(k, 'bytes_read', 0),
      bytes_written: num(k, 'bytes_written', 0),
      time: num(k, 'time', 0),
      launches: typeof launches === 'number' && Number.isInteger(launches) && launches > 0 ? launches : 1,
      fallback: k.fallback === undefined || k.fallback === null ? null : String(k.fallback)
    };
  });
  const breaks = list(d, 'breaks', (v, i): IBreakInfo => {
    const b = entry('breaks', v, i);
    return {
      from: b.from === undefined ? undefined : str(b, 'from', ''),
      to: b.to === undefined ? undefined : str(b, 'to', ''),
      line: optLine(b.line),
      reason: str(b, 'reason', 'unknown reason')
    };
  });
  const fallbacks = list(d, 'fallbacks', (v, i): IFallbackInfo => {
    const f = entry('fallbacks', v, i);
    return { line: optLine(f.line), op: str(f, 'op', '?'), reason: str(f, 'reason', '') };
  });
  const syncs = list(d, 'syncs', (v, i): ISyncInfo => {
    const s = entry('syncs', v, i);
    return { line: optLine(s.line), cause: str(s, 'cause', '?') };
  });
  const boundWrites = list(d, 'bound_writes', (v, i): IBoundWrite => {
    const w = entry('bound_writes', v, i);
    return {
      names: Array.isArray(w.names) ? w.names.map(String) : [],
      kernel: str(w, 'kernel', '?'),
      bytes: num(w, 'bytes', 0)
    };
  });
  const times: { [phase: string]: number } = {};
  if (isObject(d.times)) {
    for (const [phase, t] of Object.entries(d.times)) {
      if (typeof t === 'number' && isFinite(t)) {
        times[phase] = t;
      }
    }
  } else if (d.times !== undefined) {
    fail(`malformed report: "times" should be an object, got ${typeName(d.times)}`);
  }
  const bytesMoved =
    d.bytes_moved === undefined
      ? kernelList.reduce((n, k) => n + k.bytes_read + k.bytes_written, 0)
      : num(d, 'bytes_moved');
  return {
    schema: d.schema,
    backend: str(d, 'backend', '?'),
    ops: num(d, 'ops'),
    kernels: num(d, 'kernels'),
    kernel_list: kernelList,
    breaks,
    fallbacks,
    syncs,
    bound_writes: boundWrites,
    bytes_h2d: num(d, 'bytes_h2d', 0),
    bytes_d2h: num(d, 'bytes_d2h', 0),
    bytes_moved: bytesMoved,
    times,
    cache: str(d, 'cache', 'off'),
    guards: list(d, 'guards', v => String(v)),
    miss_reasons: list(d, 'miss_reasons', v => String(v)),
    source: str(d, 'source', ''),
    error: d.error === undefined || d.error === null ? null : String(d.error),
    options: isObject(d.options)
      ? { ...d.options, dry_run: d.options.dry_run === true, fuse: d.options.fuse !== false }
      : {}
  };
}
