// The import graph of src has no cycle, type-only imports included: a cycle means two modules
// can only be understood (and changed) together, and the next feature lands in both. The
// errors, the logger and the request context are leaves that every layer may import, so
// they import nothing of the gateway themselves but other leaves (a module that imports
// nothing); and src/http, which every layer imports, is the bottom layer: it knows nothing of
// keys, stores or surfaces (the outer handler that composes them is src/front.ts, what their
// failures answer is src/failures.ts).
import { expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from '../helpers/server.ts'

const SRC = join(ROOT, 'src')

/** Static imports and re-exports (`import type` and `export … from` included) and `import('…')` types or calls. */
const STATIC = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/g
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

export function importsOf(file: string, text: string): string[] {
  const out = new Set<string>()
  for (const re of [STATIC, DYNAMIC]) {
    for (const m of text.matchAll(re)) {
      const spec = m[1]!
      if (!spec.startsWith('.')) continue
      const path = resolve(dirname(file), spec)
      out.add(/\.[cm]?[jt]sx?$/.test(path) || existsSync(path) ? path : `${path}.ts`)
    }
  }
  return [...out]
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    if (statSync(p).isDirectory()) return sources(p)
    return /\.tsx?$/.test(f) ? [p] : []
  })
}

/** Strongly connected components of more than one module (or a module importing itself). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const part: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      part.push(w)
    } while (w !== v)
    if (part.length > 1 || graph.get(v)!.includes(v)) found.push(part.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

const graph = new Map(sources(SRC).map((f) => [f, importsOf(f, readFileSync(f, 'utf8'))]))
const name = (f: string) => relative(SRC, f)

test('the scanner sees type-only, multi-line and re-exporting imports, and the cycle finder finds a cycle', () => {
  const f = join(SRC, 'x/a.ts')
  const text = "import type { A } from './b.ts'\nimport {\n  c,\n  type D,\n} from '../c.ts'\nexport { e } from './e.ts'\ntype F = import('./f.ts').F\nconst s = 'import x from \"./not-an-import.ts\"'\n"
  expect(importsOf(f, text).map(name).sort()).toEqual(['c.ts', 'x/b.ts', 'x/e.ts', 'x/f.ts'])
  expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c']])
  // and on the real tree, a known edge (the app is built from the services)
  expect(graph.get(join(SRC, 'app.ts'))).toContain(join(SRC, 'services.ts'))
})

test('no module of src reaches itself through its imports, type imports included', () => {
  expect(cycles(graph).map((c) => c.map(name))).toEqual([])
})

test('the errors, the logger and the request context import nothing of the gateway but leaves of their own kind', () => {
  // a module that imports nothing (the redaction of keys in lib/secrets.ts) is a leaf like them
  const leaves = (f: string) => graph.get(f)!.filter((d) => graph.get(d)!.length > 0).map(name)
  for (const leaf of ['http/errors.ts', 'http/log.ts', 'http/context.ts']) expect({ leaf, imports: leaves(join(SRC, leaf)) }).toEqual({ leaf, imports: [] })
  expect(graph.get(join(SRC, 'lib/secrets.ts'))).toEqual([])
})

test('src/http imports nothing of the gateway outside itself and src/lib', () => {
  const http = [...graph].filter(([f]) => name(f).startsWith('http/'))
  expect(http.length).toBeGreaterThan(5)
  const across = http.flatMap(([f, deps]) => deps.map(name).filter((d) => !d.startsWith('http/') && !d.startsWith('lib/')).map((d) => `${name(f)} -> ${d}`))
  expect(across).toEqual([])
})


test('the pipeline and the providers import no surface: a surface is handed to them, never reached', () => {
  const below = [...graph].filter(([f]) => /^(pipeline|providers|routing|ir)\//.test(name(f)))
  const reaching = below.flatMap(([f, deps]) => deps.map(name).filter((d) => d.startsWith('surfaces/')).map((d) => `${name(f)} -> ${d}`))
  expect(reaching).toEqual([])
})
