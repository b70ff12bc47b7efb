/**
 * Finding reports in a notebook's outputs. Pure: it works on plain data
 * (the nbformat shape of outputs), so it is unit-tested without JupyterLab.
 */
import { parseReport } from './schema';
import { IFuseReport, MIME_TYPE } from './types';

/** What the helpers need of an output: its MIME bundle, if it has one. */
export interface IOutputLike {
  data?: { [mime: string]: unknown } | null;
}

/** What the helpers need of a cell. */
export interface ICellLike {
  id: string;
  type: string;
  source: string;
  executionCount: number | null;
  outputs: readonly IOutputLike[];
}

/** One cell whose last run was a `%%fuse` run. */
export interface IFusedCell {
  id: string;
  /** The cell's position in the notebook (0-based). */
  index: number;
  executionCount: number | null;
  source: string;
  /** The report, when it could be read. */
  report: IFuseReport | null;
  /** Why the report could not be read, when it could not. */
  message: string | null;
}

/** The raw report data of the last output that carries one, or `undefined`. */
export function findReportData(outputs: readonly IOutputLike[]): unknown {
  for (let i = outputs.length - 1; i >= 0; i--) {
    const data = outputs[i].data;
    if (data && Object.prototype.hasOwnProperty.call(data, MIME_TYPE)) {
      return data[MIME_TYPE];
    }
  }
  return undefined;
}

/** The notebook's fused cells, in notebook order. */
export function collectFusedCells(cells: readonly ICellLike[]): IFusedCell[] {
  const out: IFusedCell[] = [];
  cells.forEach((cell, index) => {
    if (cell.type !== 'code') {
      return;
    }
    const data = findReportData(cell.outputs);
    if (data === undefined) {
      return;
    }
    const parsed = parseReport(data);
    out.push({
      id: cell.id,
      index,
      executionCount: cell.executionCount,
      source: cell.source,
      report: parsed.ok ? parsed.report : null,
      message: parsed.ok ? null : parsed.message
    });
  });
  return out;
}

/** A string that changes whenever what the views show of a cell changes. */
export function fusedCellKey(c: IFusedCell): string {
  const r = c.report;
  return JSON.stringify([
    c.id,
    c.index,
    c.executionCount,
    c.message,
    c.source,
    r && [r.ops, r.kernels, r.cache, r.times, r.breaks.length, r.error]
  ]);
}
