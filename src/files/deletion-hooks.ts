// Who must hear that a file is gone. Batches register here to fail every queued or
// running batch that reads the file (such a batch fails: its input is gone); the delete awaits them, so the
// batches are invalidated before the client sees the answer.
import type { DeleteReason, FileRecord } from './types.ts'

export type FileDeletedHook = (file: FileRecord, reason: DeleteReason) => void | Promise<void>

export class DeletionHooks {
  private readonly hooks = new Set<FileDeletedHook>()

  /** Registers a hook; the returned function removes it. */
  on(fn: FileDeletedHook): () => void {
    this.hooks.add(fn)
    return () => this.hooks.delete(fn)
  }

  /** Runs every hook; a failing hook is reported, and does not stop the others. */
  async fire(file: FileRecord, reason: DeleteReason, onError: (e: unknown) => void): Promise<void> {
    for (const fn of this.hooks) {
      try {
        await fn(file, reason)
      } catch (e) {
        onError(e)
      }
    }
  }
}
