// A test-only hook: a batch item worker that crashes on purpose, as a bug or a native fault would
// crash it. Only with SWITCHYARD_TEST_BATCH_WORKER_CRASH_FILE set (the tests set it; nothing a
// request sends reaches it): an item worker that takes a run message while that file exists
// removes it and throws, uncaught, before it starts that message's jobs. The jobs of its earlier
// messages are then mid-call, and these never began. One crash a file (one worker removes it).
import { unlinkSync } from 'node:fs'

const FILE = process.env.SWITCHYARD_TEST_BATCH_WORKER_CRASH_FILE

export function crashIfAsked(): void {
  if (!FILE) return
  try {
    unlinkSync(FILE)
  } catch {
    return
  }
  throw new Error('batch worker crashed on purpose (SWITCHYARD_TEST_BATCH_WORKER_CRASH_FILE)')
}
