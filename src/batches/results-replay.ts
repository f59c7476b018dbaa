// At a start, the batch results a gateway killed (or stopped) while its database was away kept on
// its disk (results-spool.ts), stored before the batches resume: they would fail as lost.
import type { Services } from '../services.ts'
import { resultsSpool } from './results-spool.ts'
import { ResultsWriter } from './results-writer.ts'
import { BatchStore } from './store.ts'

/**
 * Results spooled by gateways no longer running, stored (with their records, their costs charged
 * here: the dead process never counted them). At a start, before the batches resume. A spool the
 * database does not take whole stays for the next start.
 */
export async function replayResultSpools(s: Pick<Services, 'config' | 'catalog' | 'log' | 'recorder' | 'billing' | 'storage'>): Promise<void> {
  const spool = resultsSpool(s.config.dataDir)
  for (const orphan of spool.orphans()) {
    let stored = 0
    const writer = new ResultsWriter(s, new BatchStore(s.storage), (done) => void (stored += done.filter((d) => d.stored).length))
    // ids no job of this process has (they are counted up from 1)
    orphan.rows.forEach(({ finishedAt, tried, ...r }, i) => writer.add({ ...r, id: -1 - i }, finishedAt, tried))
    await writer.writeAll()
    const left = writer.close()
    // a result found stored by a write whose answer was lost had its records' costs counted
    // here (`tried`) where that write could not: the keys' rows, which it did count, read again
    await s.billing.reread(new Set(orphan.rows.filter((r) => r.tried?.length).map((r) => r.key.id)))
    if (left > 0) {
      orphan.leave()
      s.log.error('batches: spooled results of a gateway no longer running not stored yet; the next start tries again', { spool: orphan.id, results: left })
      continue
    }
    const keptIn = orphan.done(orphan.aside)
    s.log.info('batches: spooled results of a gateway no longer running written', { spool: orphan.id, results: orphan.rows.length, stored, torn: orphan.torn })
    if (keptIn) s.log.error('batches: spooled lines that were no result, kept beside the spool', { spool: orphan.id, file: keptIn, lines: orphan.aside.length })
  }
}
