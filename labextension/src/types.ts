/**
 * The shape of a jupyter_fuse Report as JSON (`Report.to_dict()` in
 * jupyter_fuse/report.py). Only the fields the views read are listed.
 */

/** The MIME type the %%fuse magic displays its report under. */
export const MIME_TYPE = 'application/vnd.jupyter-fuse.report+json';

/** On an element that names cell lines (`"2,3"`): clicking it highlights them in the cell. */
export const LINES_ATTR = 'data-fuse-lines';

/** The report schema versions this extension can read. */
export const SUPPORTED_SCHEMAS: readonly number[] = [1];

export interface IKernelInfo {
  name: string;
  /** `ew`, `reduce`, ..., `eager` for a call that ran outside the trace */
  kind: string;
  ops: string[];
  /** cell lines, as the editor numbers them */
  lines: number[];
  bytes_read: number;
  bytes_written: number;
  /** seconds, all launches together */
  time: number;
  /** how many times it ran (a loop's kernel is one entry); 1 when absent */
  launches: number;
  /** why it ran as plain NumPy, for a fallback */
  fallback: string | null;
}

export interface IBreakInfo {
  from?: string;
  to?: string;
  line?: number | null;
  reason: string;
}

export interface IFallbackInfo {
  line?: number | null;
  op: string;
  reason: string;
}

export interface ISyncInfo {
  line?: number | null;
  cause: string;
}

/** A value written at the cell's end only because a name of the cell still holds it. */
export interface IBoundWrite {
  names: string[];
  kernel: string;
  bytes: number;
}

export interface IFuseReport {
  schema: number;
  backend: string;
  ops: number;
  kernels: number;
  kernel_list: IKernelInfo[];
  breaks: IBreakInfo[];
  fallbacks: IFallbackInfo[];
  syncs: ISyncInfo[];
  bound_writes: IBoundWrite[];
  bytes_h2d: number;
  bytes_d2h: number;
  bytes_moved: number;
  times: { [phase: string]: number };
  cache: string;
  guards: string[];
  miss_reasons: string[];
  source: string;
  error: string | null;
  /** the options the cell ran with (`dry_run`: CUDA compiled, computed on the host; `fuse`) */
  options?: { dry_run?: boolean; fuse?: boolean; [option: string]: unknown };
}

/** The result of reading a report: the report, or a message a person can read. */
export type ParseResult =
  | { ok: true; report: IFuseReport }
  | { ok: false; message: string };
