// What the dashboard fetches holds a key's data (a batch's export is its prompts and replies):
// none of it may stay in the browser's HTTP cache once read, where the next user of the
// machine, or anything reading the profile on disk, finds it after sign-out.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'
import { HAVE_CHROMIUM, launch, signIn, type Browser } from './browser.ts'

const SECRET_PROMPT = 'the quarterly numbers are 4711'

/** Whether the browser answers `path` from its cache alone (no request goes out). */
function cached(page: Page, path: string, token: string) {
  return page.evaluate(
    async ([p, t]) => {
      try {
        const r = await fetch(p!, { cache: 'only-if-cached', mode: 'same-origin', headers: { authorization: `Bearer ${t}` } })
        return r.ok ? await r.text() : null
      } catch {
        return null
      }
    },
    [path, token],
  )
}

describe.skipIf(!HAVE_CHROMIUM)('the browser keeps no copy of what the dashboard read', () => {
  let gw: Gateway
  let b: Browser
  let page: Page
  let batchId = ''

  beforeAll(async () => {
    gw = await startGateway({ env: NO_LIMITS })
    const requests = [0, 1, 2].map((i) => ({ model: 'mock-gpt', messages: [{ role: 'user', content: `${SECRET_PROMPT} (${i})` }] }))
    const res = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ requests }) })
    expect(res.status).toBe(200)
    batchId = ((await res.json()) as { id: string }).id
    for (const deadline = Date.now() + 60_000; ; await Bun.sleep(100)) {
      const b = (await (await fetch(`${gw.url}/api/v1/dashboard/batches/${batchId}`, { headers: { authorization: `Bearer ${gw.key}` } })).json()) as { status: string }
      if (b.status === 'completed') break
      if (Date.now() > deadline) throw new Error(`batch still ${b.status}`)
    }
    b = await launch()
    page = await b.page()
    page.setDefaultTimeout(60_000)
  }, 90_000)

  afterAll(async () => {
    await b?.close()
    await gw?.stop()
  })

  test('a batch export, once downloaded, is not in the browser cache', async () => {
    await signIn(page, gw.url, gw.key)
    await page.click('nav a[data-view=batches]')
    const card = `section.batch[data-batch="${batchId}"]`
    await page.waitForSelector(card)
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(`${card} button:has-text("Export JSONL")`)])
    expect(download.suggestedFilename()).toBe(`${batchId}_results.jsonl`)
    await download.path()
    expect(await cached(page, `/api/v1/dashboard/batches/${batchId}/export?format=ndjson`, gw.key)).toBeNull()
    // nor what the views read
    expect(await cached(page, '/api/v1/dashboard/session', gw.key)).toBeNull()
    expect(await cached(page, '/api/v1/dashboard/batches?limit=20', gw.key)).toBeNull()
    // the probes' own misses are the only failed requests
    expect(b.problems.filter((p) => !p.includes('ERR_CACHE_MISS'))).toEqual([])
  }, 120_000)
})
