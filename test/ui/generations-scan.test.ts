// A rare filter over more records than one page may read (the listing's scan budget): the
// generations view reads on over the partial pages and finds the oldest matches.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { SCAN_BUDGET } from '../../src/generations/list.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { HAVE_CHROMIUM, launch, screenshot, signIn, type Browser } from './browser.ts'
import { seedRecords } from './seed.ts'

const ADMIN = 'adm-' + crypto.randomUUID()

describe.skipIf(!HAVE_CHROMIUM)('generations view over partial pages', () => {
  let gw: Gateway
  let b: Browser
  let page: Page
  const common = Math.round(SCAN_BUDGET * 2.4)

  beforeAll(async () => {
    gw = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: ADMIN } })
    const key = (await gw.services.keys.authenticate(gw.key))!
    const now = Date.now()
    // three rare records, the oldest, under many common ones
    await seedRecords(gw.services, [
      { keyId: key.id, account: key.account, model: 'claude-haiku-4-5', provider: 'anthropic', at: now - 3 * 3_600_000, count: 3, cost: 0.001 },
      { keyId: key.id, account: key.account, model: 'gpt-4o-mini', provider: 'openai', at: now - 2 * 3_600_000, count: common, cost: 0.001 },
    ])
    b = await launch()
    page = await b.page()
    page.setDefaultTimeout(60_000)
  }, 120_000)

  afterAll(async () => {
    await b?.close()
    await gw?.stop()
  })

  test('a model with 3 records under 120,000 others: found by reading on over partial pages', async () => {
    await signIn(page, gw.url, ADMIN)
    await page.click('nav a[data-view=generations]')
    await page.waitForSelector('table.generations tbody tr')
    const pages: { partial: boolean; n: number }[] = []
    page.on('response', (r) => {
      if (r.url().includes('/api/v1/generations?') && r.url().includes('model=')) void r.json().then((j: any) => pages.push({ partial: j.partial, n: j.data.length }))
    })
    await page.fill('input[name=model]', 'claude-haiku-4-5')
    await page.waitForSelector('text=3 record(s) shown.')
    expect(new Set(await page.$$eval('table.generations tbody td:nth-child(2)', (tds) => tds.map((t) => t.textContent)))).toEqual(new Set(['claude-haiku-4-5']))
    expect(await page.$$eval('table.generations tbody tr', (rs) => rs.length)).toBe(3)
    // the budget made the server stop twice before the matches (2 × 50,000 of 120,003 rows)
    await Bun.sleep(200)
    expect(pages.filter((p) => p.partial).length).toBeGreaterThanOrEqual(2)
    expect(await page.isVisible('button.more')).toBe(false)
    await screenshot(page, 'generations-rare-filter')
    expect(b.problems).toEqual([])
  }, 120_000)
})
