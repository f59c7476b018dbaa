// A client's text in a JSON log line (the model it names, which the access log repeats) can drive
// no terminal that tails the log: the C1 controls (0x9b opens an escape on some terminals, 0x85 is
// a line break to some readers), U+2028/U+2029 and the bidi controls (an override reverses the
// rest of the line) come out escaped, as the text format already
// writes them, and the line still parses back to the characters the client sent.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { createLogger } from '../../src/http/log.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const lines: string[] = []
let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ log: createLogger('info', (l) => lines.push(l)) })
})
afterAll(async () => {
  await gw?.stop()
})

test('a model name holding C1 controls and line separators is escaped in the JSON access log', async () => {
  const model = 'mock-gpt\u009b31mred\u0085next\u2028line\u2029para\u007f\u202erev'
  const openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  const c = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
  expect(c.model).toBe(model)
  await Bun.sleep(100)
  const line = lines.find((l) => l.includes('"msg":"request"') && l.includes('mock-gpt'))
  expect(line).toBeDefined()
  // eslint-disable-next-line no-control-regex
  expect(line!.slice(0, -1)).not.toMatch(/[\u007f-\u009f\u2028\u2029\u202e\n]/)
  expect(line).toContain('\\u009b31mred\\u0085next\\u2028line\\u2029para\\u007f\\u202erev')
  expect((JSON.parse(line!) as { model: string }).model).toBe(model)
})
