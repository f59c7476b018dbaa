// Lists are newest first, and `has_more` is exact for every limit and cursor.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BETA, startFilesGateway, type FilesGateway } from './helpers.ts'

let gw: FilesGateway
let key: string
/** Newest first. */
let all: string[] = []
let batchOnly: string[] = []
const N = 7

beforeAll(async () => {
  gw = await startFilesGateway()
  key = (await gw.services.keys.create({ name: 'pager' })).key
  for (let i = 0; i < N; i++) {
    const purpose = i % 2 === 0 ? 'batch' : 'user_data'
    const res = await fetch(`${gw.url}/api/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: `file ${i}`, filename: `f${i}.txt`, purpose }),
    })
    const id = (await res.json()).id
    all.unshift(id)
    if (purpose === 'batch') batchOnly.unshift(id)
  }
})
afterAll(() => gw.stop())

async function get(path: string) {
  const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } })
  expect(res.status).toBe(200)
  return res.json()
}

describe('OpenAI lists (/api/v1 and /api/alpha/v1)', () => {
  test('the default list is everything, newest first, has_more false', async () => {
    const l = await get('/api/v1/files')
    expect(l.object).toBe('list')
    expect(l.data.map((f: { id: string }) => f.id)).toEqual(all)
    expect(l).toMatchObject({ has_more: false, first_id: all[0], last_id: all[N - 1] })
  })

  for (const root of ['/api/v1/files', '/api/alpha/v1/files']) {
    for (const [order, expected] of [['desc', () => all], ['asc', () => [...all].reverse()]] as const) {
      test(`${root} order=${order}: every limit walks the whole list with an exact has_more`, async () => {
        for (let limit = 1; limit <= N + 1; limit++) {
          const seen: string[] = []
          let after: string | undefined
          for (let pages = 0; ; pages++) {
            expect(pages).toBeLessThan(N + 2)
            const l = await get(`${root}?limit=${limit}&order=${order}${after ? `&after=${after}` : ''}`)
            const ids = l.data.map((f: { id: string }) => f.id)
            seen.push(...ids)
            expect(l.has_more).toBe(seen.length < N)
            if (!l.has_more) break
            after = ids.at(-1)
          }
          expect(seen).toEqual(expected())
        }
      })
    }
  }

  test('purpose filter pages too', async () => {
    const first = await get('/api/v1/files?purpose=batch&limit=3')
    expect(first.data.map((f: { id: string }) => f.id)).toEqual(batchOnly.slice(0, 3))
    expect(first.has_more).toBe(true)
    const rest = await get(`/api/v1/files?purpose=batch&limit=3&after=${first.last_id}`)
    expect(rest.data.map((f: { id: string }) => f.id)).toEqual(batchOnly.slice(3))
    expect(rest.has_more).toBe(false)
  })

  test('the openai SDK iterates every page', async () => {
    const seen: string[] = []
    for await (const f of gw.openai('v1', key).files.list({ limit: 2 })) seen.push(f.id)
    expect(seen).toEqual(all)
  })
})

describe('Anthropic lists (/api/beta)', () => {
  test('default limit is 20; the envelope has first_id, last_id, has_more and next_page', async () => {
    const l = await get('/api/beta/v1/files')
    expect(l.data.map((f: { id: string }) => f.id)).toEqual(all)
    expect(l).toMatchObject({ has_more: false, first_id: all[0], last_id: all[N - 1], next_page: null })
  })

  test('after_id walks older, before_id walks newer; has_more exact for every limit', async () => {
    for (let limit = 1; limit <= N + 1; limit++) {
      const older: string[] = []
      let after: string | undefined
      for (;;) {
        const l = await get(`/api/beta/v1/files?limit=${limit}${after ? `&after_id=${after}` : ''}`)
        older.push(...l.data.map((f: { id: string }) => f.id))
        expect(l.has_more).toBe(older.length < N)
        expect(l.next_page === null).toBe(!l.has_more)
        if (!l.has_more) break
        after = l.last_id
      }
      expect(older).toEqual(all)

      // from the oldest file, before_id pages come back newest first, nearest the cursor last
      const newer: string[][] = []
      let before = all[N - 1]
      for (;;) {
        const l = await get(`/api/beta/v1/files?limit=${limit}&before_id=${before}`)
        const ids = l.data.map((f: { id: string }) => f.id)
        newer.unshift(ids)
        const got = newer.flat().length
        expect(l.has_more).toBe(got < N - 1)
        if (!l.has_more) break
        before = l.first_id
      }
      expect(newer.flat()).toEqual(all.slice(0, N - 1))
    }
  })

  test('the 1.x SDK pages by next_page, in both directions', async () => {
    const an = gw.anthropic(key)
    const seen: string[] = []
    for await (const f of an.beta.files.list({ limit: 3, betas: [BETA] })) seen.push(f.id)
    expect(seen).toEqual(all)
    // a page token from a before_id page keeps walking towards newer files
    const page = await get(`/api/beta/v1/files?limit=2&before_id=${all[N - 1]}`)
    expect(page.data.map((f: { id: string }) => f.id)).toEqual(all.slice(N - 3, N - 1))
    const next = await get(`/api/beta/v1/files?limit=2&page=${page.next_page}`)
    expect(next.data.map((f: { id: string }) => f.id)).toEqual(all.slice(N - 5, N - 3))
    // the SDK sends the page token beside the query it began with: the token goes on from there
    const fromCursor: string[] = []
    for await (const f of an.beta.files.list({ limit: 3, after_id: all[1], betas: [BETA] } as any)) fromCursor.push((f as { id: string }).id)
    expect(fromCursor).toEqual(all.slice(2))
    const again = await get(`/api/beta/v1/files?limit=2&before_id=${all[N - 1]}&page=${page.next_page}`)
    expect(again.data).toEqual(next.data)
  })

  test('purpose filter on beta', async () => {
    const l = await get('/api/beta/v1/files?purpose=user_data')
    expect(l.data.map((f: { id: string }) => f.id)).toEqual(all.filter((id) => !batchOnly.includes(id)))
  })
})

test('bad paging parameters are 400s naming the parameter', async () => {
  const cases: [string, RegExp][] = [
    ['/api/v1/files?limit=0', /^limit: must be an integer from 1 to 10000$/],
    ['/api/alpha/v1/files?limit=x', /^limit:/],
    ['/api/v1/files?after=file-nope', /^after: no file file-nope$/],
    ['/api/v1/files?order=sideways', /^order:/],
    ['/api/beta/v1/files?limit=1001', /^limit: must be an integer from 1 to 1000$/],
    ['/api/beta/v1/files?before_id=file_nope', /^before_id: no file file_nope$/],
    ['/api/beta/v1/files?page=garbage', /^page: not a page token/],
    ['/api/beta/v1/files?after_id=a&before_id=b', /give at most one/],
  ]
  for (const [path, message] of cases) {
    const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toMatch(message)
  }
})
