// "Commit late": read the first upstream event before handing a stream back, so a failure
// before any output is an ordinary (retryable) UpstreamError, not a mid-stream event.
import type { StreamEvent } from '../ir/types.ts'
import { UpstreamError } from './types.ts'

/** Pulls the first event; rejects when it is an error; otherwise yields it and the rest. */
export async function commitFirst(events: AsyncGenerator<StreamEvent>): Promise<AsyncGenerator<StreamEvent>> {
  const first = await events.next()
  if (first.done) throw new UpstreamError({ status: 502, message: 'upstream stream ended before its first event', type: 'incomplete_stream' }, { retryable: true })
  if (first.value.type === 'error') {
    await events.return(undefined)
    const e = first.value.error
    throw new UpstreamError(e, { retryable: e.status === 429 || e.status >= 500 })
  }
  return (async function* () {
    try {
      yield first.value
      yield* events
    } finally {
      await events.return(undefined)
    }
  })()
}
