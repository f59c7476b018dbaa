// "Commit late": read the first upstream event before handing a stream back, so a failure
// before any output is an ordinary (retryable) UpstreamError, not a mid-stream event. The
// verdict is the IR's one rule (ir/errors.ts), which the pass-through relay applies too.
import { firstEventFailure } from '../ir/errors.ts'
import type { StreamEvent } from '../ir/types.ts'

/** Pulls the first event; rejects when it is an error; otherwise yields it and the rest. */
export async function commitFirst(events: AsyncGenerator<StreamEvent>): Promise<AsyncIterableIterator<StreamEvent>> {
  const first = await events.next()
  const failure = first.done ? firstEventFailure({ done: true }) : first.value.type === 'error' ? firstEventFailure({ error: first.value.error }) : undefined
  if (failure) {
    await events.return(undefined)
    throw failure
  }
  return new Headed(first, events)
}

/**
 * The first result read, then the rest straight from `events`: no generator between (it
 * would cost each chunk a promise and a result of its own). Ending it early ends `events`.
 */
class Headed implements AsyncIterableIterator<StreamEvent> {
  constructor(
    private head: IteratorResult<StreamEvent> | undefined,
    private readonly events: AsyncGenerator<StreamEvent>,
  ) {}

  next(): Promise<IteratorResult<StreamEvent>> {
    const head = this.head
    if (head === undefined) return this.events.next()
    this.head = undefined
    return Promise.resolve(head)
  }

  return(value?: unknown): Promise<IteratorResult<StreamEvent>> {
    this.head = undefined
    return this.events.return(value)
  }

  [Symbol.asyncIterator](): this {
    return this
  }
}
