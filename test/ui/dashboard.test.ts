// The dashboard in a real browser (headless Chromium): sign-in with the admin token and with an
// API key, the usage chart against seeded records, generations and their detail, creating a key
// whose secret shows once, a 2,000-item batch whose progress bar reaches 100 %, the providers
// view (and, on a gateway of two providers, their deployments with one cooling); no console errors, and the token never in a URL. Each test saves a screenshot under
// test/ui/screens/.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import type { Page } from 'playwright-core'
import { readFileSync } from 'node:fs'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'
import { HAVE_CHROMIUM, launch, screenshot, signIn, type Browser } from './browser.ts'
import { expectedHourly, seedRecords } from './seed.ts'
import { providersGateway, UPSTREAM_KEYS } from './providers-gateway.ts'

const ADMIN = 'adm-' + crypto.randomUUID()

describe.skipIf(!HAVE_CHROMIUM)('dashboard in Chromium', () => {
  let gw: Gateway
  let b: Browser
  let page: Page
  const keyA = { id: '', key: '' }
  const keyB = { id: '', key: '' }
  let expectedAll: Map<string, number>
  let requestsOfA = 0

  beforeAll(async () => {
    gw = await startGateway({ env: { ...NO_LIMITS, SWITCHYARD_ADMIN_TOKEN: ADMIN }, yaml: 'batches:\n  max_items_per_second: 700\n' })
    const a = await gw.services.keys.create({ name: 'team-a', account: 'acme', credits: 50 })
    const bb = await gw.services.keys.create({ name: 'team-b', account: 'beta' })
    Object.assign(keyA, { id: a.record.id, key: a.key })
    Object.assign(keyB, { id: bb.record.id, key: bb.key })
    await gw.services.billing.addSpent(keyA.id, 12.5) // a quarter of its credits
    const now = Date.now()
    const seeded = await seedRecords(gw.services, [
      ...[2, 3, 5, 8, 13, 20].map((h, i) => ({ keyId: keyA.id, account: 'acme', model: 'gpt-4o-mini', provider: 'openai', hoursAgo: h, count: 3 + i, cost: 0.002 })),
      ...[1, 3, 4, 9].map((h, i) => ({ keyId: keyA.id, account: 'acme', model: 'claude-sonnet-4-5', provider: 'anthropic', hoursAgo: h, count: 2 + 2 * i, cost: 0.01 })),
      ...[2, 6, 7].map((h) => ({ keyId: keyB.id, account: 'beta', model: 'mock-claude', provider: 'mock', hoursAgo: h, count: 5, cost: null })),
      // the last hour, for the providers view: 2 of 10 failed, latencies 300..309 ms
      { keyId: keyA.id, account: 'acme', model: 'gpt-4o-mini', provider: 'openai', at: now - 10 * 60_000, count: 10, errors: 2, cost: 0.002, latencyMs: 300, serviceTier: 'flex',
        usageExtras: JSON.stringify({ web_searches: 2, audio_output_tokens: 7, image_tool: { model: 'gpt-image-1', input_tokens: 50, image_input_tokens: 10, output_tokens: 4160, image_output_tokens: 4160 } }) },
      { keyId: keyB.id, account: 'beta', model: 'mock-claude', provider: 'mock', at: now - 5 * 60_000, count: 4, cost: null },
    ])
    // and three real requests of key A through the gateway (the mock provider)
    const openai = new OpenAI({ apiKey: keyA.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
    for (let i = 0; i < 3; i++) await openai.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: `hello ${i}` }] })
    await gw.services.recorder.flush()
    const live = await gw.services.storage.sql.all<{ createdAt: number; model: string }>(`SELECT created_at AS "createdAt", model FROM generations WHERE id NOT LIKE 'gen-seed%'`)
    expect(live.length).toBe(3)
    expectedAll = expectedHourly([...seeded, ...live])
    requestsOfA = seeded.filter((r) => r.apiKeyId === keyA.id).length + live.length
    b = await launch()
    page = await b.page()
    // the CI machine may be shared and loaded: waits are generous, the checks are exact
    page.setDefaultTimeout(60_000)
  }, 90_000)

  afterAll(async () => {
    await b?.close()
    await gw?.stop()
  })

  /** Waits for the usage view's next drawing. */
  async function usageDrawn() {
    await page.waitForFunction(() => document.body.dataset.usageRenderedMs !== undefined)
    return Number(await page.evaluate(() => document.body.dataset.usageRenderedMs))
  }
  const undraw = () => page.evaluate(() => delete document.body.dataset.usageRenderedMs)
  /** The totals' cards after the four every report has: [field, number, label]. */
  const extraCards = () => page.$$eval('.cards .card', (cs) => cs.slice(4).map((c) => [c.querySelector('b')?.getAttribute('data-total'), c.querySelector('b')?.textContent, c.querySelector('span')?.textContent]))
  /** The top models' extra columns, by model. */
  const extraCells = async () => Object.fromEntries(await page.$$eval('table.top-models tbody tr', (trs) => trs.map((tr) => [tr.querySelector('td')!.textContent, [...tr.querySelectorAll('td[data-extra]')].map((td) => td.textContent)])))
  const bars = () => page.$$eval('rect.seg', (rs) => rs.map((r) => [r.getAttribute('data-bucket'), r.getAttribute('data-model'), Number(r.getAttribute('data-value'))] as const))

  test('admin token: every account; the usage bars match the seeded records, bucket by bucket and model by model', async () => {
    await signIn(page, gw.url, ADMIN)
    await usageDrawn()
    expect(await page.textContent('header.top .who')).toContain('admin · all accounts')
    expect(await page.$$eval('nav a', (as) => as.map((a) => a.textContent))).toEqual(['Usage', 'Generations', 'Keys', 'Batches', 'Providers'])
    expect(await page.$$eval('select[name=account] option', (os) => os.map((o) => o.textContent))).toEqual(['all accounts', 'acme', 'beta', 'default'])
    const drawn = new Map((await bars()).map(([bucket, model, v]) => [`${bucket}|${model}`, v]))
    expect(drawn).toEqual(expectedAll)
    const total = [...expectedAll.values()].reduce((x, y) => x + y, 0)
    expect(await page.textContent('[data-total=requests]')).toBe(total.toLocaleString('en-US'))
    expect(await page.textContent('[data-total=unpriced]')).toBe(String(5 * 3 + 4 + 3)) // mock-claude and mock-gpt have no price
    expect(await page.$$eval('table.top-models tbody td:first-child', (tds) => tds.map((t) => t.textContent).sort())).toEqual(['claude-sonnet-4-5', 'gpt-4o-mini', 'mock-claude', 'mock-gpt'])
    // the parts of a model's tokens a provider's usage page shows beside them
    // and what else the costs count, only those the window has (gpt-4o-mini's last ten records:
    // 7 audio output tokens, 2 web searches, the image tool's 50 + 4,160 tokens each)
    expect(await page.$$eval('table.top-models thead th', (ths) => ths.map((t) => t.textContent))).toEqual(['model', 'requests', 'tokens', 'of which cached input', 'of which reasoning', 'of which audio output', 'web searches', 'image tool tokens', 'cost', 'unpriced'])
    expect(await extraCards()).toEqual([
      ['output_audio_tokens', '70', 'audio output tokens (part of the output)'],
      ['web_search_requests', '20', 'web searches'],
      ['image_tool_tokens', '42,100', 'image tool tokens (its own model, in and out)'],
    ])
    expect(await extraCells()).toEqual({ 'claude-sonnet-4-5': ['0', '0', '0'], 'gpt-4o-mini': ['70', '20', '42,100'], 'mock-claude': ['0', '0', '0'], 'mock-gpt': ['0', '0', '0'] })
    await screenshot(page, 'usage-admin')

    // one account: only its bars
    await undraw()
    await page.selectOption('select[name=account]', 'beta')
    await usageDrawn()
    const beta = await bars()
    expect(beta.length).toBe(4)
    expect(new Set(beta.map(([, m]) => m))).toEqual(new Set(['mock-claude']))
    expect(beta.reduce((n, [, , v]) => n + v, 0)).toBe(19)
    // an account whose records have none of the extras: the totals and the table as without them
    expect(await extraCards()).toEqual([])
    expect(await page.$$eval('table.top-models thead th', (ths) => ths.map((t) => t.textContent))).toEqual(['model', 'requests', 'tokens', 'of which cached input', 'of which reasoning', 'cost', 'unpriced'])

    // 30 days by the hour (720 buckets): one path per model, carrying the model's total
    await undraw()
    await page.selectOption('select[name=account]', '')
    await page.selectOption('select[name=timeframe]', '30d')
    await page.selectOption('select[name=granularity]', 'hour')
    await page.waitForFunction(() => document.querySelectorAll('path.seg-path').length > 0)
    const perModel = new Map<string, number>()
    for (const [k, v] of expectedAll) perModel.set(k.split('|')[1]!, (perModel.get(k.split('|')[1]!) ?? 0) + v)
    const paths = await page.$$eval('path.seg-path', (ps) => ps.map((p) => [p.getAttribute('data-model'), Number(p.getAttribute('data-total'))] as const))
    expect(new Map(paths)).toEqual(perModel)
    expect(await page.$$('rect.seg')).toEqual([])
    await screenshot(page, 'usage-30d-hourly')

    // reload: signed in from sessionStorage, drawn within the budget
    await undraw()
    await page.reload()
    const ms = await usageDrawn()
    console.log(`usage view drawn ${ms} ms after navigation (seeded records, this machine)`)
    expect(ms).toBeLessThan(3000)
    expect(b.problems).toEqual([])
  }, 120_000)

  test('API key: its own account only, read-only (no keys view, no cancel), its credits against its spend', async () => {
    await page.click('button.signout')
    await signIn(page, gw.url, keyA.key)
    await usageDrawn()
    const who = await page.textContent('header.top .who')
    expect(who).toContain(`team-a (${keyA.id}) · account acme · read-only`)
    expect(who).toContain('$12.50 of $50.00')
    expect(await page.$$eval('nav a', (as) => as.map((a) => a.textContent))).toEqual(['Usage', 'Generations', 'Batches', 'Providers'])
    expect(await page.$('select[name=account]')).toBeNull()
    expect(await page.textContent('[data-total=requests]')).toBe(String(requestsOfA))
    const models = new Set((await bars()).map(([, m]) => m))
    expect(models).toEqual(new Set(['gpt-4o-mini', 'claude-sonnet-4-5', 'mock-gpt']))
    await screenshot(page, 'usage-key')

    await page.click('nav a[data-view=generations]')
    await page.waitForSelector('table.generations tbody tr')
    const keysShown = await page.$$eval('table.generations tbody td:nth-child(4)', (tds) => [...new Set(tds.map((t) => t.textContent))])
    expect(keysShown).toEqual([keyA.id])
    expect(await page.$('select[name=key]')).toBeNull()
    await screenshot(page, 'generations-key')

    // the keys view is not there for a key, even by address
    await page.goto(`${gw.url}/ui#keys`)
    await usageDrawn()
    expect(await page.$('form.create-key')).toBeNull()
    expect(b.problems).toEqual([])
  }, 120_000)

  test('admin: generations newest first, filtered by model and status; a record opens to latency, TTFT, tokens, cost, finish reason and error', async () => {
    await page.click('button.signout')
    await signIn(page, gw.url, ADMIN)
    await page.click('nav a[data-view=generations]')
    await page.waitForSelector('table.generations tbody tr')
    expect(await page.$$eval('table.generations tbody tr', (rs) => rs.length)).toBe(50)
    expect(await page.isVisible('button.more')).toBe(true)
    const firstTimes = await page.$$eval('table.generations tbody td:first-child', (tds) => tds.map((t) => t.textContent!))
    expect([...firstTimes].sort().reverse()).toEqual(firstTimes)

    await page.fill('input[name=model]', 'claude-sonnet-4-5')
    await page.waitForFunction(() => document.querySelectorAll('table.generations tbody tr').length === 2 + 4 + 6 + 8)
    expect(new Set(await page.$$eval('table.generations tbody td:nth-child(2)', (tds) => tds.map((t) => t.textContent)))).toEqual(new Set(['claude-sonnet-4-5']))
    await page.fill('input[name=model]', 'gpt-4o-mini')
    await page.selectOption('select[name=status]', 'error')
    await page.waitForFunction(() => document.querySelectorAll('table.generations tbody tr').length === 2)
    expect(new Set(await page.$$eval('table.generations tbody td:nth-child(2)', (tds) => tds.map((t) => t.textContent)))).toEqual(new Set(['gpt-4o-mini']))
    expect(await page.$$eval('table.generations tbody td:nth-child(5)', (tds) => tds.map((t) => t.textContent))).toEqual(['error', 'error'])
    await page.click('table.generations tbody tr')
    const detail = await page.textContent('aside.detail')
    for (const part of ['latency', 'time to first token', '50 ms', 'prompt tokens', 'completion tokens', 'cost', '$0.0020', 'finish reason', 'upstream answered 500', 'HTTP status500', 'service tierflex']) expect(detail).toContain(part)
    // how it was served shows only where the upstream said
    expect(detail).not.toContain('speed')
    // what else its cost counts, where it has any
    for (const part of ['web searches2', 'of which audio7', 'image tool\u2068gpt-image-1\u2069: 50 in (10 image, 0 cached), 4,160 out (4,160 image)']) expect(detail).toContain(part)
    expect(detail).not.toContain('file searches')
    await screenshot(page, 'generations-detail')

    await page.selectOption('select[name=status]', '')
    await page.fill('input[name=model]', '')
    await page.selectOption('select[name=key]', keyB.id)
    await page.waitForFunction(() => document.querySelectorAll('table.generations tbody tr').length === 19)
    expect(b.problems).toEqual([])
  }, 120_000)

  test('admin creates a key: its secret is shown once and works; after Done it is nowhere, and the list never has it', async () => {
    await page.click('nav a[data-view=keys]')
    await page.waitForSelector(`tr[data-key="${keyA.id}"]`)
    await page.fill('form.create-key input[name=name]', 'ci-runner')
    await page.fill('form.create-key input[name=account]', 'acme')
    await page.fill('form.create-key input[name=credits]', '5')
    await page.fill('form.create-key input[name=rpm]', '30')
    await page.click('form.create-key button[type=submit]')
    const secret = (await (await page.waitForSelector('.secret code.key-secret')).textContent())!
    expect(secret).toMatch(/^sk-sy-[A-Za-z0-9_-]{40,}$/)
    await page.waitForSelector('tr:has-text("ci-runner")')
    // credits against spend: team-a has spent a quarter of its $50
    expect(await page.textContent(`tr[data-key="${keyA.id}"] .spend`)).toBe('$12.50 of $50.00')
    const [fill, track] = await page.$$eval(`tr[data-key="${keyA.id}"] .bar`, ([bar]) => [bar!.firstElementChild!.getBoundingClientRect().width, bar!.getBoundingClientRect().width])
    expect(fill! / track!).toBeCloseTo(0.25, 2)
    await screenshot(page, 'keys-created')
    const res = await fetch(`${gw.url}/api/v1/models`, { headers: { authorization: `Bearer ${secret}` } })
    expect(res.status).toBe(200)
    const created = (await gw.services.keys.list()).find((k) => k.name === 'ci-runner')!
    expect(created).toMatchObject({ account: 'acme', credits: 5, rpm: 30, status: 'active' })

    await page.click('.secret button.done')
    expect(await page.isVisible('.secret')).toBe(false)
    expect(await page.content()).not.toContain(secret)
    await page.click('nav a[data-view=usage]')
    await page.click('nav a[data-view=keys]')
    await page.waitForSelector('tr:has-text("ci-runner")')
    expect(await page.content()).not.toContain(secret)
    expect(JSON.stringify(await (await fetch(`${gw.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).json())).not.toContain(secret)

    // manage it: credit, limit, disable
    const row = `tr[data-key="${created.id}"]`
    await page.fill(`${row} input[aria-label="credit ci-runner"]`, '2.5')
    await page.click(`${row} button:has-text("Add credit")`)
    await page.waitForSelector(`${row} .spend:has-text("of $7.50")`)
    await page.fill(`${row} input[aria-label="rpm ci-runner"]`, '90')
    await page.click(`${row} button:has-text("Set")`)
    await page.click(`${row} button:has-text("Disable")`)
    await page.waitForSelector(`${row} button:has-text("Enable")`)
    expect(await gw.services.keys.get(created.id)).toMatchObject({ credits: 7.5, rpm: 90, status: 'inactive' })
    expect((await fetch(`${gw.url}/api/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401)
    await screenshot(page, 'keys')
    expect(b.problems).toEqual([])
  }, 120_000)

  test('a 2,000-item batch on the mock provider: the live bar moves to 100 %, with items/s; the export downloads with the token in a header', async () => {
    await page.click('nav a[data-view=batches]')
    await page.waitForSelector('text=No batches yet.')
    const requests = Array.from({ length: 2000 }, (_, i) => ({ model: 'mock-gpt', messages: [{ role: 'user', content: `item ${i}` }] }))
    const res = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${keyA.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ requests }) })
    expect(res.status).toBe(200)
    const { id } = (await res.json()) as { id: string }
    const card = `section.batch[data-batch="${id}"]`
    await page.waitForSelector(card)
    const seen: number[] = []
    let shot = false
    const deadline = Date.now() + 120_000
    for (;;) {
      const pct = Number(await page.getAttribute(card, 'data-percent'))
      if (seen.at(-1) !== pct) seen.push(pct)
      if (!shot && pct > 10 && pct < 90) {
        await screenshot(page, 'batch-running')
        shot = true
      }
      if (pct === 100 && (await page.getAttribute(card, 'data-status')) === 'completed' && !(await page.isVisible(`${card} button.danger`))) break
      if (Date.now() > deadline) throw new Error(`the bar stopped at ${pct} %: ${seen.join(', ')}`)
      await Bun.sleep(100)
    }
    // live: the bar moved through values below 100 and never went back
    expect(seen.filter((p) => p > 0 && p < 100).length).toBeGreaterThan(0)
    expect([...seen].sort((x, y) => x - y)).toEqual(seen)
    const text = await page.textContent(`${card} .progress-text`)
    expect(text).toContain('2,000 of 2,000 (100 %): 2,000 completed, 0 failed')
    expect(text).toMatch(/\d+\.\d items\/s/)
    expect(await page.getAttribute(`${card} [role=progressbar]`, 'aria-valuenow')).toBe('100')
    await screenshot(page, 'batches')

    const [download] = await Promise.all([page.waitForEvent('download'), page.click(`${card} button:has-text("Export JSONL")`)])
    expect(download.suggestedFilename()).toBe(`${id}_results.jsonl`)
    const lines = readFileSync((await download.path())!, 'utf8').trim().split('\n')
    expect(lines.length).toBe(2000)
    expect(JSON.parse(lines[1999]!)).toMatchObject({ index: 1999, status: 'succeeded' })

    // the key that made it sees it, without a cancel button
    await page.click('button.signout')
    await signIn(page, gw.url, keyA.key)
    await page.click('nav a[data-view=batches]')
    await page.waitForSelector(`${card}[data-percent="100"]`)
    expect(await page.$(`${card} button.danger`)).toBeNull()
    expect(b.problems).toEqual([])
  }, 150_000)

  test('providers: who serves each family, and the last hour per provider (requests, error rate, p50 latency)', async () => {
    await page.click('nav a[data-view=providers]')
    await page.waitForSelector('table.provider-stats')
    // key A: its own records only (10 seeded openai, 3 real mock requests, 2,000 batch items)
    expect(await page.textContent('tr[data-provider=openai]')).toBe('openai10220 %304 ms')
    expect(await page.textContent('tr[data-provider=mock] td:nth-child(2)')).toBe('2,003')
    await page.click('button.signout')
    await signIn(page, gw.url, ADMIN)
    await page.click('nav a[data-view=providers]')
    await page.waitForSelector('table.provider-stats')
    expect(await page.textContent('table.families')).toContain('openaibuilt-in mock provider')
    expect(await page.textContent('tr[data-provider=mock] td:nth-child(2)')).toBe('2,007')
    await screenshot(page, 'providers')
    expect(b.problems).toEqual([])
  }, 120_000)

  test('providers with several deployments: each with its models, the failed deployment cooling, the last hour\'s counts for the admin only; no upstream key on the page', async () => {
    const p = await providersGateway({ ...NO_LIMITS, SWITCHYARD_ADMIN_TOKEN: ADMIN })
    try {
      await page.click('button.signout')
      await signIn(page, p.gw.url, ADMIN)
      await page.click('nav a[data-view=providers]')
      await page.waitForSelector('table.deployments')
      expect(await page.$$eval('table.deployments tr.provider b', (bs) => bs.map((x) => x.textContent))).toEqual(['openai-a', 'openai-b', 'mock'])
      expect(await page.textContent('tr[data-provider-id=openai-a]')).toBe(`openai-a openai · ${p.a.url}/v1 · 2 keys`)
      const cells = (sel: string) => page.$$eval(`${sel} td`, (tds) => tds.map((t) => t.textContent))
      const a = 'tr[data-deployment="openai-a/gpt-4o-mini"]'
      expect(await page.getAttribute(a, 'data-state')).toBe('cooling')
      expect(await cells(a)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', '1', '1', expect.stringMatching(/^cooling until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/), '1', '1', '1', '–'])
      expect(await cells('tr[data-deployment="openai-b/gpt-4o-mini-2024-07-18"]')).toEqual(['gpt-4o-mini', 'gpt-4o-mini-2024-07-18', '3', '2', 'ok', '3', '0', '0', expect.stringMatching(/^\d+ ms$/)])
      expect(await page.$('tr[data-deployment="mock/mock-gpt"]')).not.toBeNull()
      await screenshot(page, 'providers-deployments')
      const html = await page.content()
      for (const k of UPSTREAM_KEYS) expect(html).not.toContain(k.slice(-4))

      // a key: the states, without addresses, pool sizes or counts
      await page.click('button.signout')
      await signIn(page, p.gw.url, p.gw.key)
      await page.click('nav a[data-view=providers]')
      await page.waitForSelector('table.deployments')
      expect(await page.textContent('tr[data-provider-id=openai-a]')).toBe('openai-a openai')
      expect(await cells(a)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', '1', '1', expect.stringMatching(/^cooling until /)])
      expect(await page.content()).not.toContain(p.a.url)
      expect(b.problems).toEqual([])
    } finally {
      await p.stop()
    }
  }, 120_000)

  test('a wrong token is refused at sign-in; a key disabled mid-session is signed out at its next request; no token was ever in a URL', async () => {
    const before = b.problems.length
    await page.click('button.signout')
    await page.goto(`${gw.url}/ui`)
    await page.fill('input[name=token]', 'sk-sy-not-a-key')
    await page.click('form.signin button[type=submit]')
    expect(await (await page.waitForSelector('form.signin .error')).textContent()).toBe('That token was not accepted.')

    const c = await gw.services.keys.create({ name: 'short-lived', account: 'acme' })
    await signIn(page, gw.url, c.key)
    await page.click('nav a[data-view=batches]')
    await page.waitForSelector('text=No batches yet.')
    const off = await fetch(`${gw.url}/admin/v1/keys/${c.record.id}/disable`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } })
    expect(off.status).toBe(200)
    // the batches view polls: its next request is refused, and the page goes back to the sign-in
    expect(await (await page.waitForSelector('form.signin .error')).textContent()).toBe('Signed out: API key is inactive')
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await screenshot(page, 'signed-out')
    // the only console lines: the browser's own notes of the 401 answers
    expect(b.problems.slice(before).every((p) => p.includes('status of 401'))).toBe(true)

    // over every test of this file: no token ever went into a URL the page requested
    expect(b.urls.length).toBeGreaterThan(20)
    for (const u of b.urls) for (const t of [ADMIN, keyA.key, keyB.key, c.key]) expect(u).not.toContain(t)
  }, 120_000)
})
