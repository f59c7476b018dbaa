// The Keys view's Rotate button in headless Chromium: the admin confirms, the new secret is shown
// once (as on creation) and works, the old one is refused; a dashboard tab signed in with the old
// secret is signed out at its next request. With a grace period chosen, the old one goes on working
// until it is ended from the key's row.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'
import { HAVE_CHROMIUM, launch, screenshot, signIn, type Browser } from './browser.ts'

const ADMIN = 'adm-' + crypto.randomUUID()

describe.skipIf(!HAVE_CHROMIUM)('rotating a key in the dashboard', () => {
  let gw: Gateway
  let b: Browser
  let page: Page
  beforeAll(async () => {
    gw = await startGateway({ env: { ...NO_LIMITS, SWITCHYARD_ADMIN_TOKEN: ADMIN } })
    b = await launch()
    page = await b.page()
    page.setDefaultTimeout(60_000)
  }, 60_000)
  afterAll(async () => {
    await b?.close()
    await gw?.stop()
  })

  const models = (key: string) => fetch(`${gw.url}/api/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status)

  test('Rotate: confirmed, the new secret shows once and works, the old is refused, and a tab signed in with the old one is signed out', async () => {
    const made = await gw.services.keys.create({ name: 'to-rotate', account: 'acme', credits: 3 })
    // a tab signed in with the key itself, on its batches view (which polls)
    const keyTab = await b.context.newPage()
    keyTab.setDefaultTimeout(60_000)
    await signIn(keyTab, gw.url, made.key)
    await keyTab.click('nav a[data-view=batches]')
    await keyTab.waitForSelector('text=No batches yet.')

    await signIn(page, gw.url, ADMIN)
    await page.click('nav a[data-view=keys]')
    const row = `tr[data-key="${made.record.id}"]`
    await page.waitForSelector(row)
    // a dismissed confirmation changes nothing
    page.once('dialog', (d) => void d.dismiss())
    await page.click(`${row} button.rotate`)
    expect(await page.isVisible('.secret')).toBe(false)
    expect(await models(made.key)).toBe(200)

    const before = b.problems.length
    let asked = ''
    page.once('dialog', (d) => void ((asked = d.message()), d.accept()))
    await page.click(`${row} button.rotate`)
    const fresh = (await (await page.waitForSelector('.secret code.key-secret')).textContent())!
    expect(asked).toContain('to-rotate')
    expect(fresh).toMatch(/^sk-sy-[A-Za-z0-9_-]{40,}$/)
    expect(fresh).not.toBe(made.key)
    expect(await page.textContent('.secret p')).toContain('has a new secret')
    await page.waitForSelector(`${row} .muted:has-text("${fresh.slice(0, 10)}…")`)
    expect(await models(fresh)).toBe(200)
    expect(await models(made.key)).toBe(401)
    expect(await gw.services.keys.get(made.record.id)).toMatchObject({ name: 'to-rotate', account: 'acme', credits: 3, status: 'active' })
    await screenshot(page, 'keys-rotated')
    await page.click('.secret button.done')
    expect(await page.content()).not.toContain(fresh)

    // the tab of the old secret: its next poll is refused, and it is back at the sign-in
    expect(await (await keyTab.waitForSelector('form.signin .error')).textContent()).toBe('Signed out: Invalid API key: no such key')
    // the only console lines: the browser's own notes of that tab's 401 answers
    expect(b.problems.slice(before).every((p) => p.includes('status of 401'))).toBe(true)
    await keyTab.close()

    // with a grace period chosen beside the button, the secret it replaces goes on working, and the row says until when
    await page.selectOption(`${row} select.grace`, '3600')
    page.once('dialog', (d) => void ((asked = d.message()), d.accept()))
    await page.click(`${row} button.rotate`)
    const third = (await (await page.waitForSelector(`.secret code.key-secret:not(:has-text("${fresh}"))`)).textContent())!
    expect(asked).toContain('keeps working for 1 hour')
    expect(await page.textContent('.secret p')).toContain('the old one works until')
    await page.waitForSelector(`${row} .previous:has-text("old secret until")`)
    await screenshot(page, 'keys-grace')
    expect(await models(third)).toBe(200)
    expect(await models(fresh)).toBe(200)
    const until = (await gw.services.keys.get(made.record.id))!.previousExpiresAt!
    expect(until - Date.now()).toBeGreaterThan(3_590_000)
    await page.click('.secret button.done')
    // ended early from the row: the old secret refused, the row no longer says it works
    await page.click(`${row} button.revoke-previous`)
    await page.waitForSelector(`${row} .previous`, { state: 'detached' })
    expect(await models(fresh)).toBe(401)
    expect(await models(third)).toBe(200)
    for (const u of b.urls) for (const t of [ADMIN, made.key, fresh, third]) expect(u).not.toContain(t)
  }, 120_000)
})
