// A recorded Responses failure (OpenAI's in-band `error`, then `response.failed`) after an output
// item begun, as another recording of the same wire begins it; the events after the item are
// numbered on. After the opening snapshots alone the recorded failure is an ordinary status (the
// stream is not committed yet): this is the one that comes once the reply has begun.
import { fixture } from './fake-upstream.ts'

export function responsesFailureAfterItem(): string {
  const [created, inProgress, ...rest] = fixture('openai/responses/stream-error-insufficient-quota.sse').split('\n\n').filter((e) => e.trim() !== '')
  const added = fixture('openai/responses/stream-incomplete-max-output-tokens.sse').split('\n\n').find((e) => e.startsWith('event: response.output_item.added'))!
  const renumbered = (e: string, n: number) => e.replace(/"sequence_number":\d+/, `"sequence_number":${n}`)
  return [created, inProgress, renumbered(added, 2), ...rest.map((e, i) => renumbered(e, 3 + i))].join('\n\n') + '\n\n'
}
