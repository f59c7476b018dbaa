// Batch items go through the cassettes too: the batch worker threads record their exchanges
// beside the request thread's, and a replaying gateway's workers answer the same batch from
// them without calling the upstream, each item's record marked replayed.
import { afterEach, expect, test } from 'bun:test'
import { chat, recordsOf, replayFixtures, startBatchRig, type BatchRig } from '../batches/helpers.ts'
import { cleanup, tempDir } from '../helpers/server.ts'
import { cassetteLines, filesUnder } from './rig.ts'

const rigs: BatchRig[] = []
let dir = ''
afterEach(async () => {
  await Promise.all(rigs.splice(0).map((r) => r.stop()))
  cleanup(dir)
})

async function rig(mode: string): Promise<BatchRig> {
  const r = await startBatchRig({ yaml: `providers:\n  openai: { max_retries: 0 }\n  anthropic: { max_retries: 0 }\nreplay: { mode: ${mode}, dir: ${dir} }\n` })
  rigs.push(r)
  return r
}

async function runBatch(r: BatchRig) {
  const file = await r.upload([chat('gpt-4o-mini', 'b0'), chat('claude-3-5-haiku-latest', 'b1'), chat('gpt-4o-mini', 'b2')])
  const res = await r.call('POST', '/api/v1/batches', { input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' })
  expect(res.status).toBe(200)
  const b = (await res.json()) as { id: string }
  expect((await r.ended(b.id)).status).toBe('completed')
  // the Claude item's chat answer is the gateway's translation, stamped with the time it was made
  const results = (await r.allResults(b.id)).map((x) => ({ status: x.status, result: { ...x.result, created: 0 } }))
  return { id: b.id, results }
}

test('batch items are recorded by the batch workers and replayed by them, with no upstream call', async () => {
  dir = tempDir('switchyard-cassette-batches-')
  const rec = await rig('record')
  replayFixtures(rec.up)
  const recorded = await runBatch(rec)
  expect(rec.up.requests.length).toBe(3)
  const lines = filesUnder(dir).flatMap((f) => cassetteLines(f))
  expect(lines.length).toBe(3)
  // the Claude item went to the Anthropic upstream: its text in a content block
  expect(lines.map((e) => JSON.stringify(e.request.body.messages[0].content)).sort()).toEqual(['"b0"', '"b2"', '[{"text":"b1","type":"text"}]'])

  const rep = await rig('replay')
  rep.up.script({ status: 500, json: { error: { message: 'the upstream must not be called' } } })
  const replayed = await runBatch(rep)
  expect(rep.up.requests.length).toBe(0)
  expect(replayed.results).toEqual(recorded.results)
  const records = await recordsOf(rep, replayed.id)
  expect(records.length).toBe(3)
  expect(records.every((g) => Boolean(g.replayed) && g.cost === 0)).toBe(true)
})
