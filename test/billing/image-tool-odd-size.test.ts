// The image generation tool's hold reads its image model's output tokens from a table by quality
// and size. A size that names a property every object has (`constructor`, `toString`,
// `__proto__`: strings a JSON body may hold) read that property: the count was NaN, the worst
// case NaN, which holds nothing, so a funded key ran image requests with no hold at all, as many
// at once as it liked. Such a size is one the table does not count: held at the most an image
// may be billed.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'
import { postAs } from '../helpers/burst.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig({ SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' })
  rig.up.script(() => ({ waitMs: 300, json: fixture('openai/responses/nonstream-text.json') }))
})
afterAll(async () => {
  await rig.stop()
})

/** The hold of one request while its upstream takes its time (polled until it shows, or 0). */
async function holdOf(body: unknown): Promise<number> {
  const { key, record } = await rig.gw.services.keys.create({ name: 'one hold', credits: 100 })
  const r = postAs(rig.gw, key, '/api/alpha/v1/responses', body)
  let usd = 0
  for (let i = 0; i < 25 && usd === 0; i++) {
    await Bun.sleep(10)
    const f = await rig.gw.services.billing.figures(record.id)
    usd = f ? f.reserved : rig.gw.services.billing.reserved(record.id)
  }
  const res = await r
  expect(res.status).toBe(200)
  await res.arrayBuffer()
  return usd
}

test('an image tool whose size or quality names an Object property is held at the most an image may cost, never at nothing', async () => {
  const ask = (tool: Record<string, unknown>) => ({ model: 'gpt-4o', input: 'Draw a cat.', store: false, tools: [{ type: 'image_generation', model: 'gpt-image-1', ...tool }] })
  const largest = await holdOf(ask({ size: 'auto', quality: 'auto' }))
  const unknown = await holdOf(ask({ size: '4096x4096', quality: 'high' }))
  expect(largest).toBeGreaterThan(0)
  expect(unknown).toBeGreaterThanOrEqual(largest)
  for (const size of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const held = await holdOf(ask({ size, quality: 'low' }))
    expect(Number.isFinite(held)).toBe(true)
    // (the prompt's bound differs by the size's few characters)
    expect(held).toBeCloseTo(unknown, 2)
  }
})
