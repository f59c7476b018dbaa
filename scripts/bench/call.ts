// One kind of request the bench sends, and how to tell a good answer from a bad one.

export interface Call {
  name: string
  url: string
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: string
  /** A good answer's body contains this (so a fast 404 never passes for throughput). */
  expect: string
}

export const USER_MESSAGES = [{ role: 'user', content: 'What is the capital of France?' }]

export function chatCall(name: string, base: string, key: string, model: string, stream = false): Call {
  return {
    name,
    url: base + '/chat/completions',
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: USER_MESSAGES, max_tokens: 64, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
    expect: stream ? 'chat.completion.chunk' : '"choices"',
  }
}

export function messagesCall(name: string, base: string, key: string, model: string, stream = false): Call {
  return {
    name,
    url: base + '/v1/messages',
    method: 'POST',
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 64, messages: USER_MESSAGES, ...(stream ? { stream: true } : {}) }),
    expect: stream ? 'message_start' : '"content"',
  }
}

/** The responses-style surface: the same question as `input` items, as the openai SDK sends it. */
export function responsesCall(name: string, base: string, key: string, model: string, stream = false): Call {
  return {
    name,
    url: base + '/responses',
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, input: USER_MESSAGES, max_output_tokens: 64, ...(stream ? { stream: true } : {}) }),
    expect: stream ? 'response.completed' : '"output"',
  }
}

export function getCall(name: string, url: string, key: string, expect: string): Call {
  return { name, url, method: 'GET', headers: { authorization: `Bearer ${key}` }, expect }
}

export const send = (c: Call, signal?: AbortSignal) => fetch(c.url, { method: c.method, headers: c.headers, body: c.body, signal })

/** One request, checked; throws with the status and body when it is not a good answer. */
export async function probe(c: Call): Promise<void> {
  const res = await send(c, AbortSignal.timeout(10_000))
  const text = await res.text()
  if (res.status !== 200 || !text.includes(c.expect)) throw new Error(`${c.name}: ${c.method} ${c.url} → ${res.status} ${text.slice(0, 300)}`)
}

/** A key with a credit far above what a run spends, made through the admin API: every request is admitted against it. */
export async function fundedKey(gatewayUrl: string, adminToken: string, name = 'bench funded'): Promise<string> {
  const res = await fetch(gatewayUrl + '/admin/v1/keys', { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ name, credits: 1e9 }) })
  if (res.status !== 201) throw new Error(`could not create a funded key: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { key: string }).key
}
