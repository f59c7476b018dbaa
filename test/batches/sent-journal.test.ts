// The journal of batch items sent (src/batches/sent-journal.ts), on its own: what a process no
// longer running leaves says which of its claims were sent, across the file's fresh starts, and a
// journal that may be short of what was sent (another boot, a line lost before the last) is not
// trusted. The gateway's part (a restart giving back what was never sent) is in database-away.test.ts.
import { afterAll, expect, test } from 'bun:test'
import { appendFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { deadJournals, SentJournal, sentJournalDir } from '../../src/batches/sent-journal.ts'
import type { Logger } from '../../src/http/log.ts'
import { tempDir } from '../helpers/server.ts'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
const quiet: Logger = { level: 'error', debug() {}, info() {}, warn() {}, error() {} }

function dataDir() {
  const d = tempDir('sent-journal-')
  dirs.push(d)
  return d
}
const files = (d: string) => readdirSync(sentJournalDir(d)).filter((f) => f.endsWith('.jsonl'))
/** What the dead processes' journals say (their files left for another look). */
const sentOf = (d: string) =>
  deadJournals(d).map((j) => {
    j.leave()
    return { owner: j.owner, untrusted: j.untrusted, sent: Object.fromEntries([...j.sent].map(([b, s]) => [b, [...s].sort((x, y) => x - y)])) }
  })

test('a stopped process leaves the items it sent and had no result for, across fresh starts of its file', () => {
  const d = dataDir()
  const j = new SentJournal(sentJournalDir(d), 'inst_a', quiet)
  j.ready()
  expect(files(d)).toHaveLength(1)
  expect(deadJournals(d)).toEqual([]) // its process runs: not a dead one's
  expect(j.called([{ batchId: 'b1', idx: 0 }, { batchId: 'b1', idx: 1 }, { batchId: 'b2', idx: 5 }])).toBe(true)
  j.stored('b1', 0)
  // many more lines than items outstanding: the file starts anew with those outstanding
  for (let i = 0; i < 5_000; i++) {
    j.called([{ batchId: 'b3', idx: i }])
    j.stored('b3', i)
  }
  j.called([{ batchId: 'b1', idx: 7 }])
  expect(files(d)).toHaveLength(1)
  j.close(true)
  const [left] = sentOf(d)
  // the lines before the fresh start named items stored since: gone; those after it stay till the next
  expect(left!.sent.b3!.length).toBeLessThan(1_000)
  expect(left!.sent.b3).not.toContain(0)
  const { b3: _, ...others } = left!.sent
  expect({ ...left, sent: others }).toEqual({ owner: 'inst_a', untrusted: false, sent: { b1: [1, 7], b2: [5] } })
  const [dead] = deadJournals(d)
  dead!.done()
  expect(files(d)).toEqual([])
})

test('a stop whose claims all went back leaves no journal', () => {
  const d = dataDir()
  const j = new SentJournal(sentJournalDir(d), 'inst_b', quiet)
  j.ready()
  j.called([{ batchId: 'b1', idx: 0 }])
  j.close(false)
  expect(files(d)).toEqual([])
  expect(j.called([{ batchId: 'b1', idx: 1 }])).toBe(false)
})

test('a last line cut short by the kill is no item sent; a line lost before it, or another boot, makes the journal untrusted', () => {
  const torn = dataDir()
  const a = new SentJournal(sentJournalDir(torn), 'inst_c', quiet)
  a.called([{ batchId: 'b1', idx: 2 }])
  a.close(true)
  appendFileSync(join(sentJournalDir(torn), files(torn)[0]!), '{"b":"b1","i":[')
  expect(sentOf(torn)).toEqual([{ owner: 'inst_c', untrusted: false, sent: { b1: [2] } }])

  const mid = dataDir()
  const b = new SentJournal(sentJournalDir(mid), 'inst_d', quiet)
  b.called([{ batchId: 'b1', idx: 2 }])
  const file = join(sentJournalDir(mid), files(mid)[0]!)
  appendFileSync(file, '{"b":"b1",\n')
  b.called([{ batchId: 'b1', idx: 3 }])
  b.close(true)
  expect(sentOf(mid)[0]!.untrusted).toBe(true)

  const boot = dataDir()
  const c = new SentJournal(sentJournalDir(boot), 'inst_e', quiet)
  c.called([{ batchId: 'b1', idx: 2 }])
  c.close(true)
  const other = join(sentJournalDir(boot), files(boot)[0]!)
  writeFileSync(other, '{"owner":"inst_e","boot":"another-boot"}\n{"b":"b1","i":[2]}\n')
  expect(sentOf(boot)[0]!.untrusted).toBe(true)
})
