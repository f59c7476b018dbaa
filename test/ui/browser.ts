// Headless Chromium for the dashboard tests: Debian's /usr/bin/chromium driven by playwright-core
// (which never downloads a browser), with a fresh profile per launch. Without that executable
// the browser tests are skipped, and say so.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? '/usr/bin/chromium'
export const HAVE_CHROMIUM = existsSync(CHROMIUM)
export const SCREENS = join(import.meta.dir, 'screens')

if (!HAVE_CHROMIUM) {
  console.warn(`test/ui: SKIPPED the browser tests: ${CHROMIUM} is absent (apt-get install -y --no-install-recommends chromium)`)
}

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface Browser {
  context: BrowserContext
  /** Console errors, page errors and failed requests seen so far, on every page. */
  problems: string[]
  /** Every URL the pages requested. */
  urls: string[]
  page(): Promise<Page>
  close(): Promise<void>
}

export async function launch(): Promise<Browser> {
  // a fresh profile each time (playwright passes it as --user-data-dir)
  const profile = mkdtempSync(join(tmpdir(), 'switchyard-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 860 },
    acceptDownloads: true,
  })
  const problems: string[] = []
  const urls: string[] = []
  const watch = (p: Page) => {
    p.on('console', (m) => void (m.type() === 'error' && problems.push(`console: ${m.text()}`)))
    p.on('pageerror', (e) => void problems.push(`page error: ${e.message}`))
    p.on('requestfailed', (r) => void problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`))
    p.on('request', (r) => void urls.push(r.url()))
  }
  context.on('page', watch)
  for (const p of context.pages()) watch(p)
  return {
    context,
    problems,
    urls,
    page: async () => context.pages()[0] ?? (await context.newPage()),
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

export async function screenshot(page: Page, name: string) {
  mkdirSync(SCREENS, { recursive: true })
  await page.screenshot({ path: join(SCREENS, `${name}.png`), fullPage: true })
}

/** Sign in through the form; waits for the shell. */
export async function signIn(page: Page, base: string, token: string) {
  await page.goto(`${base}/ui`)
  await page.fill('input[name=token]', token)
  await page.click('form.signin button[type=submit]')
  await page.waitForSelector('header.top')
}
