// A test-only hook: a batch item worker that crashes on purpose, as a bug or a native fault would
// crash it. Only with SWITCHYARD_TEST_BATCH_WORKER_CRASH_FILE set (the tests set it; nothing a
// request sends reaches it): an item worker that takes a run message while that file exists
// removes it and throws, uncaught, before it starts that message's jobs. The jobs of its earlier
// messages are then mid-call, and these never began. One crash a file (one worker removes it).
// A file that says `after-store` asks for the other moment instead: the results writer, once a
// write has stored item results, removes it, has the item workers crash, and tells the main
// thread which items it stored only a while later (AFTER_STORE_TELL_MS), after the pool has
// failed their jobs for the dead worker: a result stored just after its item was failed.
import { readFileSync, unlinkSync } from 'node:fs'

const FILE = process.env.SWITCHYARD_TEST_BATCH_WORKER_CRASH_FILE
const AFTER_STORE = 'after-store'
/** Past the pool's wait for a dead worker's close (pool.ts, 2 s): its jobs are failed by then. */
/** Whether the hook is set at all (a writer then keeps its item workers' ports, to tell them). */
export const HOOKED = FILE !== undefined

export const AFTER_STORE_TELL_MS = 2_500

/** Whether the file asks for `mode` now (then it is removed: one crash a file). */
function asked(mode: 'run' | typeof AFTER_STORE): boolean {
  if (!FILE) return false
  try {
    if ((readFileSync(FILE, 'utf8').trim() === AFTER_STORE ? AFTER_STORE : 'run') !== mode) return false
    unlinkSync(FILE)
    return true
  } catch {
    return false
  }
}

const crash = () => {
  throw new Error('batch worker crashed on purpose (SWITCHYARD_TEST_BATCH_WORKER_CRASH_FILE)')
}

export function crashIfAsked(): void {
  if (asked('run')) crash()
}

/** Only with the hook set: whether a writer should have its item workers crash after this write. */
export const crashAfterStoreAsked = (): boolean => asked(AFTER_STORE)

/** Only with the hook set: an item worker crashes when its writer says so over their port. */
export function crashOnWord(port: MessagePort): void {
  if (FILE) port.onmessage = (ev) => ev.data === 'crash' && crash()
}
