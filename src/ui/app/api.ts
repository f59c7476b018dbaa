// The gateway's API with the signed-in token. The token lives in this module's memory, and in
// sessionStorage only if the user asks to stay signed in for the tab; it always travels in the
// Authorization header, never in a URL (downloads too: fetched, then saved from a blob).
const STORE = 'switchyard.token'

let token: string | null = null

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
  }
}

export function setToken(t: string | null, remember = false) {
  token = t
  try {
    if (t && remember) sessionStorage.setItem(STORE, t)
    else sessionStorage.removeItem(STORE)
  } catch {
    // storage may be disabled: memory alone still works
  }
}

export function rememberedToken(): string | null {
  try {
    return sessionStorage.getItem(STORE)
  } catch {
    return null
  }
}

function headers(extra?: Record<string, string>): Record<string, string> {
  return { authorization: `Bearer ${token ?? ''}`, ...extra }
}

async function fail(res: Response): Promise<never> {
  let message = `${res.status} ${res.statusText}`
  try {
    const body = (await res.json()) as { error?: string }
    if (body.error) message = body.error
  } catch {
    // not JSON: keep the status line
  }
  throw new ApiError(res.status, message)
}

export async function get<T>(path: string, params?: Record<string, string | number | undefined>): Promise<T> {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== '') q.set(k, String(v))
  const res = await fetch(q.size ? `${path}?${q}` : path, { headers: headers(), cache: 'no-store' })
  if (!res.ok) return fail(res)
  return (await res.json()) as T
}

export async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: headers(body === undefined ? undefined : { 'content-type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!res.ok) return fail(res)
  return (await res.json()) as T
}

/** Fetch with the header, then hand the bytes to the browser as a file. */
export async function download(path: string, filename: string): Promise<void> {
  const res = await fetch(path, { headers: headers() })
  if (!res.ok) return fail(res)
  const url = URL.createObjectURL(await res.blob())
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
