// A small JSON-schema checker for the tests (no validator is installed): the keywords the mock's
// examples claim to meet, checked as a strict validator does (multipleOf by a whole quotient,
// pattern by the real RegExp with the u flag). Returns the paths that fail, [] when it validates.
type Schema = Record<string, any>

const FORMATS: Record<string, RegExp> = {
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  time: /^\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i,
  uri: /^[a-z][a-z0-9+.-]*:\/\/\S+$/i,
  ipv4: /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/,
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)

export function check(v: unknown, s: Schema, root: Schema = s, at = '$'): string[] {
  if (s.$ref) {
    const target = s.$ref.slice(2).split('/').reduce((o: any, k: string) => o?.[k], root)
    const { $ref: _, ...rest } = s
    return [...check(v, target, root, at), ...check(v, rest, root, at)]
  }
  const bad: string[] = []
  const fail = (why: string) => bad.push(`${at}: ${why}`)
  if (s.enum && !s.enum.some((e: unknown) => JSON.stringify(e) === JSON.stringify(v))) fail('enum')
  if ('const' in s && JSON.stringify(s.const) !== JSON.stringify(v)) fail('const')
  if (s.anyOf && !s.anyOf.some((b: Schema) => check(v, b, root, at).length === 0)) fail('anyOf')
  if (s.oneOf && s.oneOf.filter((b: Schema) => check(v, b, root, at).length === 0).length !== 1) fail('oneOf')
  for (const b of s.allOf ?? []) bad.push(...check(v, b, root, at))
  const types: string[] | undefined = s.type === undefined ? undefined : [s.type].flat()
  const t = typeOf(v)
  if (types && !types.some((x) => x === t || (x === 'integer' && Number.isInteger(v)))) fail(`type ${types} got ${t}`)
  if (typeof v === 'string') {
    const n = [...v].length
    if (s.minLength !== undefined && n < s.minLength) fail('minLength')
    if (s.maxLength !== undefined && n > s.maxLength) fail('maxLength')
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) fail(`pattern ${s.pattern} got ${JSON.stringify(v)}`)
    if (s.format && FORMATS[s.format] && !FORMATS[s.format]!.test(v)) fail(`format ${s.format}`)
    if (s.format === 'date-time' || s.format === 'date') if (Number.isNaN(Date.parse(v))) fail('a real date')
  }
  if (typeof v === 'number') {
    if (typeof s.minimum === 'number' && (s.exclusiveMinimum === true ? v <= s.minimum : v < s.minimum)) fail('minimum')
    if (typeof s.maximum === 'number' && (s.exclusiveMaximum === true ? v >= s.maximum : v > s.maximum)) fail('maximum')
    if (typeof s.exclusiveMinimum === 'number' && v <= s.exclusiveMinimum) fail('exclusiveMinimum')
    if (typeof s.exclusiveMaximum === 'number' && v >= s.exclusiveMaximum) fail('exclusiveMaximum')
    if (s.multipleOf !== undefined && !Number.isInteger(v / s.multipleOf)) fail(`multipleOf ${s.multipleOf} got ${v}`)
  }
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems) fail('minItems')
    if (s.maxItems !== undefined && v.length > s.maxItems) fail('maxItems')
    if (s.uniqueItems && new Set(v.map((x) => JSON.stringify(x))).size !== v.length) fail(`uniqueItems got ${JSON.stringify(v)}`)
    v.forEach((x, i) => {
      const item = s.prefixItems?.[i] ?? s.items
      if (item) bad.push(...check(x, item, root, `${at}[${i}]`))
    })
  }
  if (t === 'object') {
    const o = v as Record<string, unknown>
    for (const k of s.required ?? []) if (!(k in o)) fail(`required ${k}`)
    for (const [k, p] of Object.entries(s.properties ?? {})) if (k in o) bad.push(...check(o[k], p as Schema, root, `${at}.${k}`))
    if (s.additionalProperties === false) for (const k of Object.keys(o)) if (!(k in (s.properties ?? {}))) fail(`additional ${k}`)
    if (s.minProperties !== undefined && Object.keys(o).length < s.minProperties) fail('minProperties')
  }
  return bad
}
