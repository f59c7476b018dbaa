// Preloaded into a gateway by object-counts.ts: on SIGUSR2 it writes its heap's live objects by
// type (JSC's heapStats) to $COUNTS_TO. With the collector off (BUN_JSC_useGC=0) nothing dies,
// so two such counts differ by what was allocated between them.
import { heapStats } from 'bun:jsc'
import { writeFileSync } from 'node:fs'

process.on('SIGUSR2', () => {
  writeFileSync(process.env.COUNTS_TO!, JSON.stringify(heapStats().objectTypeCounts))
})

// on SIGUSR1, a heap snapshot in V8's format (closures by name) to $SNAPSHOT_TO
process.on('SIGUSR1', () => {
  writeFileSync(process.env.SNAPSHOT_TO!, Bun.generateHeapSnapshot('v8'))
})
