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
  early.clear()
  try {
    if (t && remember) sessionStorage.setItem(STORE, t)
    else sessionStorage.removeItem(STORE)
  } catch {
    // storage may be disabled: memory alone still works
  }
}

export const isToken = (t: string) => token === t

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

let unauthorized: (message: string) => void = () => {}

/** Called when the token stops being accepted (a key disabled or its credits gone). */
export function onUnauthorized(f: (message: string) => void) {
  unauthorized = f
}

async function fail(res: Response): Promise<never> {
  let message = `${res.status} ${res.statusText}`
  try {
    const body = (await res.json()) as { error?: string }
    if (body.error) message = body.error
  } catch {
    // not JSON: keep the status line
  }
  if (res.status === 401 && token !== null) unauthorized(message)
  throw new ApiError(res.status, message)
}

type Params = Record<string, string | number | undefined>

function urlOf(path: string, params?: Params): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== '') q.set(k, String(v))
  return q.size ? `${path}?${q}` : path
}

async function fetchJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { headers: headers(), cache: 'no-store' })
  if (!res.ok) return fail(res)
  return (await res.json()) as T
}

/** GETs started early (at page load, beside the session check), each taken once by `get`. */
const early = new Map<string, Promise<unknown>>()

export function prefetch(path: string, params?: Params) {
  const url = urlOf(path, params)
  const p = fetchJson(url)
  p.catch(() => {}) // a failure is reported to whoever takes it
  early.set(url, p)
}

export function get<T>(path: string, params?: Params): Promise<T> {
  const url = urlOf(path, params)
  const p = early.get(url)
  if (p) {
    early.delete(url)
    return p as Promise<T>
  }
  return fetchJson<T>(url)
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
  // a key's data (a batch's prompts and replies): never left in the browser's HTTP cache
  const res = await fetch(path, { headers: headers(), cache: 'no-store' })
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
