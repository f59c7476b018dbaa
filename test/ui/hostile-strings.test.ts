// The dashboard against records whose strings a client chose: model ids, error text, service
// tier and speed words, key names and accounts made of markup, `javascript:` URLs, bidi
// controls and very long ids. Every view shows them as text: no element, attribute or handler
// comes out of them, no dialog opens, the browser reports no refused script, and the page
// shows the characters as they were sent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import type { Page } from 'playwright-core'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'
import { HAVE_CHROMIUM, launch, signIn, type Browser } from './browser.ts'
import { seedRecords } from './seed.ts'

const ADMIN = 'adm-' + crypto.randomUUID()
const IMG = '<img src=x onerror=alert(1)>'
const SVG = '"><svg onload=alert(2)>'
const JS = 'javascript:alert(3)'
const LONG = 'mock-' + 'W'.repeat(3000)
/** Client-named model ids, served by the mock (so the deployments view meets them too). */
const MODELS = [`mock-${IMG}`, `mock-${SVG}`, `mock-${JS}`]
const ERROR = `upstream said: </td><script>alert(4)</script>${IMG}`
/** A right-to-left override left open: whatever the page writes after it must not come out reversed. */
const RLO = '\u202E'
const BIDI_MODEL = `mock-bidi${RLO}`

/** The left edge of each character of `part` within `text` as the browser lays it out on a line. */
function layout(page: Page, text: string, part: string) {
  return page.evaluate(
    ([t, p]) => {
      const probe = document.createElement('div')
      probe.textContent = t!
      probe.style.whiteSpace = 'pre'
      document.body.append(probe)
      const at = t!.indexOf(p!)
      const lefts = [...p!].map((_, i) => {
        const r = document.createRange()
        r.setStart(probe.firstChild!, at + i)
        r.setEnd(probe.firstChild!, at + i + 1)
        return r.getBoundingClientRect().left
      })
      probe.remove()
      return lefts
    },
    [text, part],
  )
}

/** Whether the table is no wider than the page's own width (a long id does not stretch it). */
const fitsThePage = (page: Page, selector: string) => page.$eval(selector, (t) => t.getBoundingClientRect().width <= document.documentElement.clientWidth + 1)

const ascending = (xs: number[]) => xs.length > 1 && xs.every((x, i) => i === 0 || x > xs[i - 1]!)

/** Whatever markup, handler or link the page holds that the app itself never makes. */
function injected(page: Page) {
  return page.evaluate(() => {
    const found: string[] = []
    for (const el of document.querySelectorAll('*')) {
      const tag = el.tagName.toLowerCase()
      if (['img', 'iframe', 'object', 'embed', 'base', 'meta[http-equiv]'].includes(tag)) found.push(tag)
      if (tag === 'script' && !(el as HTMLScriptElement).src.includes('/ui/assets/')) found.push('inline script')
      if (tag === 'svg' && !el.classList.contains('chart')) found.push('svg outside the chart')
      for (const a of el.attributes) if (/^on/i.test(a.name)) found.push(`${tag}[${a.name}]`)
      if (tag === 'a' && !/^#|^blob:/.test(el.getAttribute('href') ?? '#')) found.push(`a[href=${el.getAttribute('href')}]`)
    }
    return found
  })
}

describe.skipIf(!HAVE_CHROMIUM)('dashboard with hostile strings in the records', () => {
  let gw: Gateway
  let b: Browser
  let page: Page
  const dialogs: string[] = []
  const hostileKey = { id: '', key: '' }
  const bidiKey = { id: '', key: '' }

  beforeAll(async () => {
    gw = await startGateway({ env: { ...NO_LIMITS, SWITCHYARD_ADMIN_TOKEN: ADMIN } })
    const k = await gw.services.keys.create({ name: IMG, account: SVG, credits: 10 })
    Object.assign(hostileKey, { id: k.record.id, key: k.key })
    await gw.services.billing.addSpent(hostileKey.id, 2.5)
    const bk = await gw.services.keys.create({ name: `team${RLO}`, account: `acct${RLO}`, credits: 10 })
    Object.assign(bidiKey, { id: bk.record.id, key: bk.key })
    await gw.services.billing.addSpent(bidiKey.id, 2.5)
    const openai = new OpenAI({ apiKey: hostileKey.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
    for (const model of MODELS) await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
    await seedRecords(gw.services, [
      { keyId: hostileKey.id, account: SVG, model: MODELS[0]!, provider: 'mock', hoursAgo: 2, count: 3, errors: 1, errorText: ERROR, cost: 0.001, serviceTier: SVG, speed: IMG, inferenceGeo: JS },
      { keyId: hostileKey.id, account: SVG, model: LONG, provider: 'mock', hoursAgo: 3, count: 2, cost: 0.001 },
      { keyId: bidiKey.id, account: `acct${RLO}`, model: BIDI_MODEL, provider: 'mock', hoursAgo: 2, count: 12, cost: 0.001 },
    ])
    await gw.services.recorder.flush()
    b = await launch()
    page = await b.page()
    page.setDefaultTimeout(60_000)
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
  }, 90_000)

  afterAll(async () => {
    await b?.close()
    await gw?.stop()
  })

  const clean = async () => {
    expect(await injected(page)).toEqual([])
    expect(dialogs).toEqual([])
    expect(b.problems).toEqual([])
  }

  test('usage: the legend, the bars\' labels and the top models show the ids as text', async () => {
    await signIn(page, gw.url, ADMIN)
    await page.waitForSelector('table.top-models')
    // a markup sink, should the app ever reach one, refuses a plain string (Trusted Types)
    const before = b.problems.length
    expect(await page.evaluate(() => {
      try {
        document.createElement('div').innerHTML = '<b>x</b>'
        return 'taken'
      } catch (e) {
        return (e as Error).name
      }
    })).toBe('TypeError')
    // the browser's note of that refusal (it may arrive a moment later) is the probe's own
    for (let i = 0; i < 100 && b.problems.length === before; i++) await Bun.sleep(20)
    expect(b.problems.splice(before).every((p) => p.includes('TrustedHTML'))).toBe(true)
    const shown = await page.$$eval('table.top-models tbody td:first-child', (tds) => tds.map((t) => t.textContent))
    for (const m of [...MODELS, LONG]) expect(shown).toContain(m)
    // a model id of 3,000 characters takes its share of the table, not the page's width many times over
    expect(await fitsThePage(page, 'table.top-models')).toBe(true)
    const legend = await page.$$eval('.legend li', (lis) => lis.map((l) => l.textContent))
    for (const m of MODELS) expect(legend).toContain(m)
    const labels = await page.$$eval('rect.seg', (rs) => rs.map((r) => r.getAttribute('data-model')))
    for (const m of MODELS) expect(labels).toContain(m)
    await clean()
  }, 120_000)

  test('generations: the row and its detail show the model, the error, the tier, speed and geo as text', async () => {
    await page.click('nav a[data-view=generations]')
    await page.waitForSelector('table.generations tbody tr.failed')
    expect(await fitsThePage(page, 'table.generations')).toBe(true)
    await page.click('table.generations tbody tr.failed')
    const dd = await page.$$eval('aside.detail dd', (ds) => ds.map((d) => d.textContent))
    for (const s of [ERROR, SVG, IMG, JS, hostileKey.id]) expect(dd).toContain(s)
    expect(await page.$eval('aside.detail h3', (h) => h.firstChild?.textContent)).toBe(MODELS[0]!)
    // the admin's key filter names each key by its name
    expect(await page.$$eval('select[name=key] option', (os) => os.map((o) => o.textContent))).toContain(`\u2068${IMG}\u2069 (${hostileKey.id})`)
    await clean()
  }, 120_000)

  test('keys: the name and account as text', async () => {
    await page.click('nav a[data-view=keys]')
    const row = `tr[data-key="${hostileKey.id}"]`
    await page.waitForSelector(row)
    expect(await page.$$eval(`${row} td`, (tds) => [tds[0]!.textContent, tds[2]!.textContent])).toEqual([IMG, SVG])
    await clean()
  }, 120_000)

  test('providers: the model ids clients named, as the admin sees the deployments', async () => {
    await page.click('nav a[data-view=providers]')
    await page.waitForSelector('table.provider-stats')
    const models = await page.$$eval('table.deployments td:first-child', (tds) => tds.map((t) => t.textContent))
    for (const m of MODELS) expect(models).toContain(m)
    await clean()
  }, 120_000)

  test('the key itself signed in: its name and account in the banner as text', async () => {
    await page.click('button.signout')
    await signIn(page, gw.url, hostileKey.key)
    await page.waitForSelector('table.top-models')
    expect(await page.textContent('header.top .who')).toContain(`${IMG} (${hostileKey.id}) · account ${SVG}`)
    await clean()
  }, 120_000)

  test('a key name and account with a bidi override: the banner still shows the spend in order', async () => {
    await page.click('button.signout')
    await signIn(page, gw.url, bidiKey.key)
    await page.waitForSelector('rect.seg')
    const lefts = await page.$eval('header.top .who', (who) => {
      const node = [...who.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.includes('$2.50'))!
      const at = node.textContent!.indexOf('$2.50 of $10.00')
      return [...'$2.50 of $10.00'].map((_, i) => {
        const r = document.createRange()
        r.setStart(node, at + i)
        r.setEnd(node, at + i + 1)
        return r.getBoundingClientRect().left
      })
    })
    expect(ascending(lefts)).toBe(true)
    await clean()
  }, 120_000)

  test('a model id with a bidi override: its bars\' tooltips still show the count in order', async () => {
    const titles = await page.$$eval('rect.seg title', (ts) => ts.map((t) => t.textContent!))
    const bidi = titles.filter((t) => t.includes(BIDI_MODEL))
    expect(bidi.length).toBe(1)
    expect(bidi[0]).toEndWith(': 12')
    expect(ascending(await layout(page, bidi[0]!, ': 12'))).toBe(true)
    await clean()
  }, 120_000)

  test('the admin\'s key filter: the key id after a name with a bidi override reads as it is', async () => {
    await page.click('button.signout')
    await signIn(page, gw.url, ADMIN)
    await page.click('nav a[data-view=generations]')
    await page.waitForSelector(`select[name=key] option[value="${bidiKey.id}"]`, { state: 'attached' })
    const option = await page.textContent(`select[name=key] option[value="${bidiKey.id}"]`)
    expect(option).toEndWith(` (${bidiKey.id})`)
    expect(ascending(await layout(page, option!, bidiKey.id))).toBe(true)
    await clean()
  }, 120_000)
})
