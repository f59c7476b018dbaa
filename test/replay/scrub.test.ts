// What a cassette's scrubber takes out of the raw text it writes (a reply's JSON, a stream's
// events): a key wherever the logs' redaction would find one, not only a bare `sk-` word. A
// model's text quoting a key after a line break is `\nsk-…` in the event's JSON, and the
// scrubber's own pattern, which wants no letter before `sk-`, let it through to the file.
import { describe, expect, test } from 'bun:test'
import { scrubberOf } from '../../src/replay/cassette-scrub.ts'

const scrub = scrubberOf({ providers: {}, adminToken: undefined, bootstrapKey: undefined } as unknown as Parameters<typeof scrubberOf>[0])

describe('the cassette scrubber', () => {
  test('a key after a JSON escape in an event, after an underscore, and a gateway key with no digit', () => {
    const event = String.raw`data: {"choices":[{"delta":{"content":"here:\nsk-proj-Abcdefghijklmnop1234567890"}}]}`
    expect(scrub(event)).not.toContain('sk-proj-Abcdefghijklmnop1234567890')
    expect(scrub('OPENAI_API_KEY_sk-proj-Abcdefghijklmnop1234567890')).not.toContain('Abcdefghijklmnop1234567890')
    expect(scrub('use sk-sy-abcdefghijklmnopqrstuvwxyzABCD please')).not.toContain('abcdefghijklmnopqrstuvwxyzABCD')
  })

  test('ordinary text stays as written (a package name, a masked card)', () => {
    const text = 'pip install sk-learn; card ending ****1234; Hello****world'
    expect(scrub(text)).toBe(text)
  })
})
