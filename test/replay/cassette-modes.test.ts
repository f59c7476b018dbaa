// The cassettes' modes and rules, each against fake upstreams: identical requests replay in
// the order recorded; record-missing replays what is there and records the rest; a test names
// its own file; large bodies go to blobs; a stream keeps its spacing at `speed`; an upstream's
// error or broken stream replays as it came; a key quoted in a request is scrubbed and still
// matches; `bill` prices replayed calls; and the settings from the config, env and CLI.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config/load.ts'
import { fixture, fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir, type Gateway } from '../helpers/server.ts'
import { cassetteLines, filesUnder, gatewayOn, openaiReply, anthropicReply, recordOf, SECRETS } from './rig.ts'

let openai: FakeUpstream
let anthropic: FakeUpstream
beforeAll(async () => {
  ;[openai, anthropic] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
})
afterAll(async () => {
  await Promise.all([openai.stop(), anthropic.stop()])
})

const dirs: string[] = []
const gateways: Gateway[] = []
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.stop()))
  for (const d of dirs.splice(0)) cleanup(d)
  openai.requests.length = 0
  anthropic.requests.length = 0
})

function cassetteDir(): string {
  const d = tempDir('switchyard-cassette-modes-')
  dirs.push(d)
  return d
}

async function gateway(mode: string, dir: string, extra = '', o: { keys?: boolean } = {}): Promise<Gateway> {
  openai.script(openaiReply)
  anthropic.script(anthropicReply)
  const gw = await gatewayOn({ openai, anthropic }, `  mode: ${mode}\n  dir: ${dir}\n${extra}`, o)
  gateways.push(gw)
  return gw
}

async function stop(gw: Gateway) {
  gateways.splice(gateways.indexOf(gw), 1)
  await gw.stop()
}

async function chat(gw: Gateway, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', ...body }),
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

const hi = (content = 'Say hi') => ({ messages: [{ role: 'user', content }] })
const textOf = (r: { text: string }) => JSON.parse(r.text).choices[0].message.content as string

describe('cassette modes', () => {
  test('identical requests replay their recordings in the order they were made (and again from the first)', async () => {
    const dir = cassetteDir()
    const rec = await gateway('record', dir)
    const answer = fixtureJson('openai/chat/nonstream-text.json')
    const say = (content: string) => ({ json: { ...answer, choices: [{ ...answer.choices[0], message: { role: 'assistant', content } }] } })
    openai.script(say('first'), say('second'))
    expect(textOf(await chat(rec, hi()))).toBe('first')
    expect(textOf(await chat(rec, hi()))).toBe('second')
    await stop(rec)
    expect(cassetteLines(join(dir, 'gpt-4o-mini.jsonl')).length).toBe(2)

    const rep = await gateway('replay', dir, '', { keys: false })
    expect([textOf(await chat(rep, hi())), textOf(await chat(rep, hi())), textOf(await chat(rep, hi()))]).toEqual(['first', 'second', 'first'])
    expect(openai.requests.length).toBe(2)
  })

  test('record-missing replays what is recorded and records the rest; a record run starts its files afresh', async () => {
    const dir = cassetteDir()
    const rec = await gateway('record', dir)
    await chat(rec, hi())
    await stop(rec)
    expect(openai.requests.length).toBe(1)

    const more = await gateway('record-missing', dir)
    const again = await chat(more, hi())
    expect(openai.requests.length).toBe(1)
    expect((await recordOf(more, JSON.parse(again.text).id)).replayed).toBe(true)
    const fresh = await chat(more, hi('Say something else'))
    expect(fresh.status).toBe(200)
    expect(openai.requests.length).toBe(2)
    expect((await recordOf(more, JSON.parse(fresh.text).id)).replayed).toBeUndefined()
    await stop(more)
    expect(cassetteLines(join(dir, 'gpt-4o-mini.jsonl')).length).toBe(2)

    const rep = await gateway('replay', dir, '', { keys: false })
    expect((await chat(rep, hi('Say something else'))).text).toBe(fresh.text)
    await stop(rep)

    // recording again replaces what the file held
    const again2 = await gateway('record', dir)
    await chat(again2, hi('A third thing'))
    await stop(again2)
    const lines = cassetteLines(join(dir, 'gpt-4o-mini.jsonl'))
    expect(lines.map((e) => e.request.body.messages[0].content)).toEqual(['A third thing'])
  })

  test('x-switchyard-cassette names the file; a name that is not a plain file name is a 400', async () => {
    const dir = cassetteDir()
    const rec = await gateway('record', dir)
    expect((await chat(rec, hi(), { 'x-switchyard-cassette': 'checkout-flow.test' })).status).toBe(200)
    expect((await chat(rec, hi('no name'))).status).toBe(200)
    for (const bad of ['../escape', 'a/b', '.hidden', 'x'.repeat(129)]) {
      const r = await chat(rec, hi(), { 'x-switchyard-cassette': bad })
      expect(r.status).toBe(400)
      expect(r.text).toContain('x-switchyard-cassette')
    }
    await stop(rec)
    expect(filesUnder(dir).map((f) => f.slice(dir.length + 1)).sort()).toEqual(['checkout-flow.test.jsonl', 'gpt-4o-mini.jsonl'])

    // the named file answers only requests that name it
    const rep = await gateway('replay', dir, '', { keys: false })
    expect((await chat(rep, hi(), { 'x-switchyard-cassette': 'checkout-flow.test' })).status).toBe(200)
    const miss = await chat(rep, hi(), { 'x-switchyard-cassette': 'another-test' })
    expect(miss.status).toBe(424)
    expect(miss.text).toContain('another-test.jsonl')
    expect(miss.text).toContain('nothing is recorded there')
  })

  test('a body larger than 64 KiB is kept in blobs/ by its hash, and replays the same', async () => {
    const dir = cassetteDir()
    const rec = await gateway('record', dir)
    const answer = fixtureJson('openai/chat/nonstream-text.json')
    const long = 'lorem ipsum '.repeat(7_000)
    openai.script({ json: { ...answer, choices: [{ ...answer.choices[0], message: { role: 'assistant', content: long } }] } })
    const first = await chat(rec, hi(long))
    expect(first.status).toBe(200)
    await stop(rec)
    const [line] = cassetteLines(join(dir, 'gpt-4o-mini.jsonl'))
    expect(line!.request.blob).toMatch(/^[0-9a-f]{64}$/)
    expect(line!.response.blob).toMatch(/^[0-9a-f]{64}$/)
    expect(existsSync(join(dir, 'blobs', `${line!.request.blob}.json`))).toBe(true)
    expect(readFileSync(join(dir, 'gpt-4o-mini.jsonl'), 'utf8').length).toBeLessThan(4096)

    const rep = await gateway('replay', dir, '', { keys: false })
    expect((await chat(rep, hi(long))).text).toBe(first.text)
    // the nearest recording is read from its blob for a miss
    const miss = await chat(rep, hi(long + '!'))
    expect(miss.status).toBe(424)
    expect(miss.text).toContain('differs at body.messages.0.content')
  })

  test('a stream replays at once by default, and with its recorded spacing at speed 1', async () => {
    const dir = cassetteDir()
    const rec = await gateway('record', dir)
    openai.script({ sse: fixture('openai/chat/stream-text-include-usage.sse'), delayMs: 40 })
    const ask = { ...hi(), stream: true }
    const recorded = await chat(rec, ask)
    await stop(rec)
    const [line] = cassetteLines(join(dir, 'gpt-4o-mini.jsonl'))
    const span = line!.response.events.at(-1).ms as number
    expect(span).toBeGreaterThan(200)

    const timed = async (gw: Gateway) => {
      const t0 = performance.now()
      const r = await chat(gw, ask)
      return { text: r.text, ms: performance.now() - t0 }
    }
    const fast = await gateway('replay', dir, '', { keys: false })
    const quick = await timed(fast)
    expect(quick.text).toBe(recorded.text)
    expect(quick.ms).toBeLessThan(span / 2)
    await stop(fast)
    const real = await gateway('replay', dir, '  speed: 1\n', { keys: false })
    const slow = await timed(real)
    expect(slow.text).toBe(recorded.text)
    expect(slow.ms).toBeGreaterThan(span * 0.9)
  })

  test("an upstream's error, and a stream that broke off, replay as they came", async () => {
    const dir = cassetteDir()
    const rec = await gateway('record', dir)
    openai.script(
      { status: 503, headers: { 'retry-after': '7' }, json: { error: { message: 'overloaded', type: 'server_error' } } },
      // pieces 10 ms apart: the drop comes well after the events before it, which the gateway must
      // have read (at 1 ms a loaded machine could see the reset first, and answer 502)
      { sse: fixture('openai/chat/stream-text-include-usage.sse'), dropAfterEvents: 2, delayMs: 10 },
    )
    const busy = await chat(rec, hi())
    expect(busy.status).toBe(503)
    const broken = await chat(rec, { ...hi(), stream: true })
    expect(broken.status).toBe(200)
    await stop(rec)

    const rep = await gateway('replay', dir, '', { keys: false })
    const busy2 = await chat(rep, hi())
    expect(busy2.status).toBe(503)
    expect(busy2.headers.get('retry-after')).toBe('7')
    expect(busy2.text).toBe(busy.text)
    const broken2 = await chat(rep, { ...hi(), stream: true })
    expect(broken2.text).toBe(broken.text)
  })

  test('a key quoted in a request is scrubbed from the cassette, and the request still matches', async () => {
    const dir = cassetteDir()
    const rec = await gateway('record', dir)
    const quoted = hi(`my keys are ${SECRETS.openai} and sk-live0123456789abcdefXYZ`)
    const first = await chat(rec, quoted)
    await stop(rec)
    const text = readFileSync(join(dir, 'gpt-4o-mini.jsonl'), 'utf8')
    expect(text).not.toContain(SECRETS.openai)
    expect(text).not.toContain('sk-live0123456789abcdefXYZ')
    expect(text).toContain('[scrubbed]')

    const rep = await gateway('replay', dir, '', { keys: false })
    expect((await chat(rep, quoted)).text).toBe(first.text)
  })

  test('match.ignore and match.patterns leave fields and text out of the match (a date in a prompt, a temperature)', async () => {
    const dir = cassetteDir()
    const match = `  match:\n    ignore: [temperature]\n    patterns: ["Today's date is [0-9-]+"]\n`
    const rec = await gateway('record', dir, match)
    const first = await chat(rec, { ...hi("Today's date is 2026-11-25. Say hi"), temperature: 0.2 })
    await stop(rec)
    const [line] = cassetteLines(join(dir, 'gpt-4o-mini.jsonl'))
    expect(line!.request.body).toEqual({ messages: [{ role: 'user', content: '[ignored]. Say hi' }], model: 'gpt-4o-mini' })

    const rep = await gateway('replay', dir, match, { keys: false })
    expect((await chat(rep, { ...hi("Today's date is 2027-02-01. Say hi"), temperature: 0.9 })).text).toBe(first.text)
    const miss = await chat(rep, hi("Today's date is 2027-02-01. Say hello"))
    expect(miss.status).toBe(424)
    expect(miss.text).toContain('differs at body.messages.0.content')
  })

  test('a cassette that cannot be read is a 500 naming it, not an upstream out of reach', async () => {
    const dir = cassetteDir()
    writeFileSync(join(dir, 'gpt-4o-mini.jsonl'), '{"key":\n')
    const rep = await gateway('replay', dir, '', { keys: false })
    const r = await chat(rep, hi())
    expect(r.status).toBe(500)
    expect(r.text).toContain(`cassette ${join(dir, 'gpt-4o-mini.jsonl')}: line 1 is not JSON`)
  })

  test('bill: true prices replayed calls as the upstream would', async () => {
    const dir = cassetteDir()
    const rec = await gateway('record', dir)
    const first = await chat(rec, hi())
    const cost = (await recordOf(rec, JSON.parse(first.text).id)).cost
    expect(cost).toBeGreaterThan(0)
    await stop(rec)
    const rep = await gateway('replay', dir, '  bill: true\n', { keys: false })
    const g = await recordOf(rep, JSON.parse((await chat(rep, hi())).text).id)
    expect(g.replayed).toBe(true)
    expect(g.cost).toBe(cost)
  })
})

describe('cassette settings', () => {
  const load = (env: Record<string, string>, flags: Record<string, string> = {}, cwd = '/tmp') => loadConfig({ env, flags, cwd })

  test('env and flags, flags first; a directory alone replays; a replay needs its directory', () => {
    const dir = cassetteDir()
    expect(load({}).replay).toBeNull()
    expect(load({ SWITCHYARD_REPLAY_MODE: 'record-missing', SWITCHYARD_REPLAY_DIR: dir }).replay).toMatchObject({ mode: 'record-missing', dir, bill: false })
    expect(load({ SWITCHYARD_REPLAY_DIR: dir }).replay?.mode).toBe('replay')
    expect(load({ SWITCHYARD_REPLAY_MODE: 'replay', SWITCHYARD_REPLAY_DIR: '/nowhere' }, { record: 'rec' }, dir).replay).toMatchObject({ mode: 'record', dir: join(dir, 'rec') })
    expect(() => load({}, { replay: '/nowhere/at/all' })).toThrow('does not exist')
    expect(() => load({}, { replay: dir, record: dir })).toThrow('--record and --replay')
    expect(() => load({ SWITCHYARD_REPLAY_MODE: 'rewind', SWITCHYARD_REPLAY_DIR: dir })).toThrow('replay.mode')
    expect(() => load({ SWITCHYARD_REPLAY_MODE: 'record' })).toThrow('replay.dir')
    const file = join(dir, 'bad.yaml')
    writeFileSync(file, 'replay:\n  mode: record\n  dir: x\n  match:\n    patterns: ["(unclosed"]\n')
    expect(() => load({}, { config: file }, dir)).toThrow('replay.match.patterns[0]')
  })

  test('replaying, each family has its provider without a key (not the mock)', () => {
    const dir = cassetteDir()
    expect(Object.keys(load({}).providers)).toEqual([])
    const c = load({}, { replay: dir })
    expect(Object.keys(c.providers).sort()).toEqual(['anthropic', 'openai'])
    expect(c.providers.openai!.apiKeys).toEqual([])
    expect(Object.keys(load({}, { record: dir }).providers)).toEqual([])
  })

  test('serve --record DIR, then serve --replay DIR with no key and no upstream', async () => {
    const dir = cassetteDir()
    const up = await startFakeUpstream()
    up.script(openaiReply)
    const key = 'sk-sy-cli-cassettes-' + crypto.randomUUID().replaceAll('-', '')
    const rec = await spawnGateway({ args: ['--record', dir], env: { SWITCHYARD_BOOTSTRAP_KEY: key, OPENAI_API_KEY: SECRETS.openai, OPENAI_BASE_URL: `${up.url}/v1` } })
    try {
      expect(rec.output()).toContain(`cassettes: record ${dir}`)
      const ask = (url: string) =>
        fetch(`${url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', ...hi() }) }).then(async (r) => ({ status: r.status, text: await r.text() }))
      const first = await ask(rec.url)
      expect(first.status).toBe(200)
      rec.kill()
      await rec.exited
      await up.stop()
      const rep = await spawnGateway({ args: ['--replay', dir], env: { SWITCHYARD_BOOTSTRAP_KEY: key } })
      try {
        expect(rep.output()).toContain(`cassettes: replay ${dir}`)
        expect(await ask(rep.url)).toEqual(first)
      } finally {
        rep.kill()
        await rep.exited
      }
    } finally {
      rec.kill()
      await up.stop()
    }
  })
})
