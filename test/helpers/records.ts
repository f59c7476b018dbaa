// A generation record as its key reads it over HTTP (GET /api/v1/generations?id=), failing the
// test when it is not there.
import { expect } from 'bun:test'
import type { Gateway } from './server.ts'

export async function generationOf(gw: Pick<Gateway, 'url' | 'key'>, id: string): Promise<Record<string, any>> {
  const r = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
  expect(r.status).toBe(200)
  return ((await r.json()) as { generation: Record<string, any> }).generation
}
