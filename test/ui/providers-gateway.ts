// A gateway with two OpenAI providers on local fake upstreams, for the dashboard's providers
// view: gpt-4o-mini is deployed on both (openai-a first), openai-a answers 500, so after the
// requests sent here it is cooling and openai-b has served them all.
import OpenAI from 'openai'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

/** The providers' upstream keys: none of them, nor their tails, may reach a dashboard answer. */
export const UPSTREAM_KEYS = ['sk-pool-first-QZXW', 'sk-pool-second-JKVY', 'sk-only-key-of-b-PLMR']

export interface ProvidersGateway {
  gw: Gateway
  a: FakeUpstream
  b: FakeUpstream
  stop(): Promise<void>
}

export async function providersGateway(env: Record<string, string> = {}, requests = 3): Promise<ProvidersGateway> {
  const [a, b] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
  a.script({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })
  b.script({ json: fixture('openai/chat/nonstream-text.json') })
  const [k1, k2, k3] = UPSTREAM_KEYS
  const yaml = `
providers:
  - { id: openai-a, kind: openai, base_url: ${a.url}/v1, api_keys: [${k1}, ${k2}], max_retries: 0 }
  - { id: openai-b, kind: openai, base_url: ${b.url}/v1, api_key: ${k3}, max_retries: 0 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments:
      - { provider: openai-a, priority: 1 }
      - { provider: openai-b, priority: 2, weight: 3, upstream_id: gpt-4o-mini-2024-07-18 }
routing: { cooldown_s: 600, failures_to_cool: 1 }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
`
  const gw = await startGateway({ env, yaml })
  const client = new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
  for (let i = 0; i < requests; i++) await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
  return {
    gw,
    a,
    b,
    async stop() {
      await gw.stop()
      await Promise.all([a.stop(), b.stop()])
    },
  }
}
