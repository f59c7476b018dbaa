// A batch's span. Its items run in worker threads, each of which exports its own spans, and the
// batch may end on another instance than the one that ran an item: so the batch's trace and
// span ids are derived from its id, the same everywhere, and an item's span names them as its
// parent without any state shared between threads. The batch's own span is made when it ends
// (whichever instance ends it), from its creation to then.
import { createHash } from 'node:crypto'
import type { Attributes } from '@opentelemetry/api'
import { SWITCHYARD } from './names.ts'

export interface EndedBatch {
  id: string
  endpoint: string
  status: string
  apiKeyId: string
  /** Epoch ms. */
  createdAt: number
  total: number
  succeeded: number
  failed: number
}

/** The batch's trace id and its span's id: 24 bytes of a hash of its id. */
export function batchIds(batchId: string): { traceId: string; spanId: string } {
  const hex = createHash('sha256').update(`switchyard batch ${batchId}`).digest('hex')
  return { traceId: hex.slice(0, 32), spanId: hex.slice(32, 48) }
}

export function batchAttributes(b: EndedBatch): Attributes {
  return {
    [SWITCHYARD.batchId]: b.id,
    [SWITCHYARD.keyId]: b.apiKeyId,
    'switchyard.batch.endpoint': b.endpoint,
    'switchyard.batch.status': b.status,
    'switchyard.batch.total': b.total,
    'switchyard.batch.succeeded': b.succeeded,
    'switchyard.batch.failed': b.failed,
  }
}
