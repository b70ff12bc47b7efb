/** Shared test data: a schema-1 report like Report.to_dict() makes. */
import { parseReport } from '../schema';
import { IFuseReport } from '../types';

export function sampleReport(extra: { [key: string]: unknown } = {}): { [key: string]: unknown } {
  return {
    schema: 1,
    backend: 'cpu',
    ops: 8,
    kernels: 2,
    kernel_list: [
      { name: 'k0', ops: ['sin', 'power', 'add'], lines: [1], bytes_read: 80, bytes_written: 80, time: 0.001 },
      { name: 'k1', ops: ['sum'], lines: [2], bytes_read: 80, bytes_written: 8, time: 0.0005 }
    ],
    breaks: [{ from: 'k0', to: 'k1', line: 2, reason: 'reduction boundary' }],
    fallbacks: [{ line: 3, op: 'np.sort', reason: 'np.sort is not supported lazily' }],
    syncs: [{ line: 4, cause: 'float()' }],
    transfers: [],
    bytes_h2d: 0,
    bytes_d2h: 0,
    times: { guard: 0, trace: 0.002, plan: 0.0002, compile: 0, run: 0.0003, total: 0.0025 },
    cache: 'miss',
    guards: [],
    miss_reasons: ['x.shape (10,) -> (20,)'],
    graph: '',
    nodes: [],
    source: '%%fuse\ny = np.sin(x)',
    options: {},
    error: null,
    bytes_moved: 248,
    ...extra
  };
}

/** The report, or a failed test with the parse message. */
export function read(data: unknown): IFuseReport {
  const r = parseReport(data);
  if (!r.ok) {
    throw new Error(r.message);
  }
  return r.report;
}
