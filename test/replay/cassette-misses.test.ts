// A replaying gateway asked for cassettes that are not there: the names are whatever clients
// send (x-switchyard-cassette, a model id of their own), so a miss holds nothing in memory and
// the file is looked for again, and answered from once it is there.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { copyFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { CassetteDir } from '../../src/replay/cassette-dir.ts'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, tempDir } from '../helpers/server.ts'
import { anthropicReply, gatewayOn, openaiReply } from './rig.ts'

let openai: FakeUpstream
let anthropic: FakeUpstream
const dir = tempDir('switchyard-cassette-misses-')
beforeAll(async () => {
  ;[openai, anthropic] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
  openai.script(openaiReply)
  anthropic.script(anthropicReply)
})
afterAll(async () => {
  await Promise.all([openai.stop(), anthropic.stop()])
  cleanup(dir)
})

const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hi' }] }

test('a cassette missed holds nothing, and replays once it is there', async () => {
  const rec = await gatewayOn({ openai, anthropic }, `  mode: record\n  dir: ${dir}`)
  const chat = (url: string, key: string, cassette: string) =>
    fetch(`${url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-switchyard-cassette': cassette },
      body: JSON.stringify(ask),
    })
  expect((await chat(rec.url, rec.key, 'recorded')).status).toBe(200)
  await rec.stop()

  const rep = await gatewayOn({ openai, anthropic }, `  mode: replay\n  dir: ${dir}`, { keys: false })
  try {
    for (let i = 0; i < 20; i++) {
      const miss = await chat(rep.url, rep.key, `made-up-${i}`)
      expect(miss.status).toBe(424)
      expect(miss.headers.get('x-request-id')).toBeTruthy()
      expect(((await miss.json()) as { error: string }).error).toContain(`made-up-${i}.jsonl`)
    }
    // the file a miss named, there now, answers
    copyFileSync(join(dir, 'recorded.jsonl'), join(dir, 'made-up-0.jsonl'))
    const hit = await chat(rep.url, rep.key, 'made-up-0')
    expect(hit.status).toBe(200)
    await hit.text()
  } finally {
    await rep.stop()
  }
  expect(readdirSync(dir).sort()).toEqual(['made-up-0.jsonl', 'recorded.jsonl'])

  // what the directory holds in memory: the files that are there, never the names missed
  const cassettes = new CassetteDir(dir, { ignore: [], patterns: [] }, (s) => s)
  const req = (file: string) => ({ file, key: 'k', path: '/chat/completions', body: {}, provider: 'openai' })
  for (let i = 0; i < 1000; i++) expect(cassettes.take(req(`made-up-${i + 1}.jsonl`), true)).toBeUndefined()
  cassettes.take(req('recorded.jsonl'), true)
  expect(cassettes.held).toBe(1)
})
