// Shared set-up for the files tests: a gateway with rate limits out of the way, a second
// key, and SDK clients for both families.
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startGateway, type Gateway, type GatewayOptions } from '../helpers/server.ts'

export const BETA = 'files-api-2025-04-14' as const

export const NO_LIMITS = { SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_IP_RPM: '100000', SWITCHYARD_KEY_BURST_RPS: '100000' }

export interface FilesGateway extends Gateway {
  otherKey: string
  openai(root?: 'v1' | 'alpha/v1', key?: string): OpenAI
  anthropic(key?: string): Anthropic
}

export async function startFilesGateway(opts: GatewayOptions = {}): Promise<FilesGateway> {
  const gw = await startGateway({ ...opts, env: { ...NO_LIMITS, ...opts.env } })
  const otherKey = (await gw.services.keys.create({ name: 'other' })).key
  return {
    ...gw,
    otherKey,
    openai: (root = 'v1', key = gw.key) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/${root}`, maxRetries: 0 }),
    anthropic: (key = gw.key) => new Anthropic({ apiKey: key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 }),
  }
}

/** A fetch that sends the key as `x-api-key` instead of a Bearer token, as @ai-sdk/anthropic does. */
export function xApiKeyFetch(): typeof fetch {
  return ((url: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers)
    const auth = headers.get('authorization')
    if (auth) {
      headers.delete('authorization')
      headers.set('x-api-key', auth.replace(/^Bearer\s+/i, ''))
    }
    return fetch(url, { ...init, headers })
  }) as typeof fetch
}

export async function sha256(data: ArrayBuffer | Uint8Array): Promise<string> {
  return new Bun.CryptoHasher('sha256').update(data).digest('hex')
}

/** Every regular file under a directory, relative paths. */
export async function filesUnder(dir: string): Promise<string[]> {
  const glob = new Bun.Glob('**/*')
  const out: string[] = []
  for await (const f of glob.scan({ cwd: dir, dot: true, onlyFiles: true })) out.push(f)
  return out.sort()
}

/** The HTTP status an SDK call ended with (SDK promises are thenables that bun's `rejects` misreads). */
export const status = (p: PromiseLike<unknown>) => Promise.resolve(p).then(() => 200, (e) => e.status as number)
