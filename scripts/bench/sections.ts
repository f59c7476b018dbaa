// Parts of docs/bench.md that run.ts does not produce: the batch bench's section (batch.ts
// writes it), the cluster bench's (cluster.ts) and the per-request CPU budget (written by
// hand). Each sits between two marker comments; when run.ts rewrites the file it carries
// every such section over unchanged.
import { END as BATCH_END, START as BATCH_START } from './batch-report.ts'

export interface Markers {
  start: string
  end: string
}

export const BATCH: Markers = { start: BATCH_START, end: BATCH_END }
export const BUDGET: Markers = { start: '<!-- budget:start -->', end: '<!-- budget:end -->' }
/** The cluster bench's section (cluster.ts writes its figures; the account around them is by hand). */
export const CLUSTER: Markers = { start: '<!-- cluster:start -->', end: '<!-- cluster:end -->' }

/** The long-stream phase's section (long-streams.ts writes its figures; the account around them is by hand). */
export const LONG_STREAMS: Markers = { start: '<!-- long-streams:start -->', end: '<!-- long-streams:end -->' }

/** The records-at-scale section (records-scale.ts prints its figures; the section is by hand). */
export const RECORDS: Markers = { start: '<!-- records:start -->', end: '<!-- records:end -->' }

/** The sections run.ts keeps, in the order they are appended when the new report lacks them. */
export const KEPT: Markers[] = [BUDGET, BATCH, CLUSTER, LONG_STREAMS, RECORDS]

/** The section of `doc` between the markers, markers included; undefined when it has none. */
export function sectionOf(doc: string, m: Markers): string | undefined {
  const a = doc.indexOf(m.start)
  const b = doc.indexOf(m.end, a + m.start.length)
  return a >= 0 && b > a ? doc.slice(a, b + m.end.length) : undefined
}

/** `doc` with its section replaced by `section` (appended when it has none). */
export function replaceSection(doc: string, m: Markers, section: string): string {
  const a = doc.indexOf(m.start)
  const b = doc.indexOf(m.end, a + m.start.length)
  if (a >= 0 && b > a) return doc.slice(0, a) + section + doc.slice(b + m.end.length)
  return doc.replace(/\s*$/, '') + '\n\n' + section + '\n'
}

/** The freshly rendered `report`, with every kept section of the `previous` file in its place. */
export function keepSections(report: string, previous: string | undefined): string {
  let out = report
  for (const m of KEPT) {
    const kept = previous === undefined ? undefined : sectionOf(previous, m)
    if (kept !== undefined) out = replaceSection(out, m, kept)
  }
  return out
}
