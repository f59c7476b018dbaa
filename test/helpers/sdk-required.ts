// The fields an official SDK's reply type declares without `?`, read from its .d.ts in
// node_modules: a typed client reads them as always there (null where the type allows), so a
// reply of the gateway must carry every one. An SDK upgrade that adds one fails the tests that
// use this, before a client of it reads `undefined`.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const modules = join(import.meta.dir, '..', '..', 'node_modules')

export function requiredFields(pkg: 'openai' | '@anthropic-ai/sdk', file: string, iface: string): string[] {
  const text = readFileSync(join(modules, pkg, 'resources', file), 'utf8')
  const start = text.search(new RegExp(`^export interface ${iface} (extends [^{]+)?\\{`, 'm'))
  if (start < 0) throw new Error(`no interface ${iface} in ${pkg}/resources/${file}`)
  return [...text.slice(start, text.indexOf('\n}', start)).matchAll(/^ {4}(\w+): /gm)].map((m) => m[1]!)
}

/** The required fields of `iface` that `obj` lacks. */
export function missingFields(obj: object, pkg: 'openai' | '@anthropic-ai/sdk', file: string, iface: string): string[] {
  return requiredFields(pkg, file, iface).filter((k) => (obj as Record<string, unknown>)[k] === undefined)
}
