// Why a batch's input file can no longer be read, in the words of the batch's error. The code is
// `input_file_deleted` whichever it was (clients read it); the message says whether the file was
// deleted or removed when it expired, when the gateway can tell.
import type { FilesService } from '../files/service.ts'
import type { DeleteReason } from '../files/types.ts'

export const INPUT_GONE = 'input_file_deleted'

/** `unknown`: the record is gone and nothing is left to say how. */
export type InputGone = DeleteReason | 'unknown'

const HOW: Record<InputGone, string> = {
  deleted: 'was deleted',
  expired: 'was removed when it expired',
  unknown: 'is gone (deleted, or removed when it expired)',
}

export const goneHow = (why: InputGone) => HOW[why]
export const inputGoneMessage = (fileId: string, why: InputGone) => `the input file ${fileId} ${HOW[why]}`

/**
 * null while the owner's file is live; else why it is gone. An expired file's record stays, its
 * expiry past, until the expiry pass removes it. `seenExpiresAt`: the expiry of the record as
 * last seen live, when known; a record gone before it was deleted (the expiry pass takes none
 * before), one gone after it expired (a delete takes no expired file).
 */
export async function inputFileGone(files: FilesService, owner: string, fileId: string, seenExpiresAt?: number | null): Promise<InputGone | null> {
  const now = files.now()
  // now 0: the record whatever its expiry
  const rec = await files.repo.find(owner, fileId, 0)
  const expiresAt = rec ? rec.expiresAt : seenExpiresAt
  if (expiresAt === undefined) return 'unknown'
  if (expiresAt !== null && expiresAt <= now) return 'expired'
  return rec ? null : 'deleted'
}
