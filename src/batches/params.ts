// Query parameters of the batch routes: integers, booleans and enums, each a 400 that names
// the parameter when it is wrong. Pure.
import { badRequest } from '../http/errors.ts'

export function intParam(q: URLSearchParams, name: string, o: { min: number; max: number; dflt: number }): number {
  const raw = q.get(name)
  if (raw === null) return o.dflt
  const n = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN
  if (!Number.isSafeInteger(n) || n < o.min || n > o.max) throw badRequest(`${name}: must be an integer from ${o.min} to ${o.max}`)
  return n
}

export function boolParam(q: URLSearchParams, name: string): boolean {
  const raw = q.get(name)
  if (raw === null || raw === 'false' || raw === '0') return false
  if (raw === 'true' || raw === '1' || raw === '') return true
  throw badRequest(`${name}: must be true or false`)
}

export function enumParam<T extends string>(q: URLSearchParams, name: string, values: readonly T[], dflt: T): T {
  const raw = q.get(name)
  if (raw === null) return dflt
  if (!(values as readonly string[]).includes(raw)) throw badRequest(`${name}: must be one of ${values.join(', ')}`)
  return raw as T
}

export function idParam(q: URLSearchParams, name: string): string | undefined {
  const raw = q.get(name)
  if (raw === null) return undefined
  if (raw === '') throw badRequest(`${name}: must not be empty`)
  return raw
}
