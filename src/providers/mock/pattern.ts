// A string a JSON schema's `pattern` matches, built from the pattern's text (never by running
// the client's regex: a hostile one could hold the thread). A common subset is understood —
// literals, escapes (\d \w \s and their negations, \. \n \uXXXX …), classes and ranges, `.`,
// groups (plain, (?:…), named), alternation, quantifiers (* + ? {n} {n,} {n,m}, lazy or not),
// ^ and $ at a branch's ends. Anything else (lookarounds, back-references, \b, \p{…}) gives
// undefined, and the caller falls back to its plain example.

type Node =
  | { t: 'lit'; c: string }
  | { t: 'class'; options: string[] }
  | { t: 'group'; alts: Node[][] }
  | { t: 'rep'; node: Node; min: number; max: number }
  | { t: 'start' }
  | { t: 'end' }

const MAX_PATTERN = 4096
const MAX_DEPTH = 32
/** The most parts one string is built of (so at most as many characters). */
const MAX_STEPS = 4_000
/** Patterns parsed lately: a schema's many strings of one pattern parse it once. */
const parsed = new Map<string, Node[][] | undefined>()
const MAX_PARSED = 64
/** The most options a class offers (the first is the plain example; the rest make variants). */
const MAX_OPTIONS = 32

const POOL = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-. @/:+=,;!~*#%&']
type Pred = (c: string) => boolean
const DIGIT: Pred = (c) => c >= '0' && c <= '9'
const WORD: Pred = (c) => /^[A-Za-z0-9_]$/.test(c)
const SPACE: Pred = (c) => /^\s$/.test(c)
const LINE: Pred = (c) => c === '\n' || c === '\r' || c === '\u2028' || c === '\u2029'
/** \d \w \s and their negations: what they match, and what they offer first. */
const SETS: Record<string, { pred: Pred; first: string }> = {
  d: { pred: DIGIT, first: '0' },
  w: { pred: WORD, first: 'a' },
  s: { pred: SPACE, first: ' ' },
  D: { pred: (c) => !DIGIT(c), first: 'a' },
  W: { pred: (c) => !WORD(c), first: '-' },
  S: { pred: (c) => !SPACE(c), first: 'a' },
}
const CONTROL: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', '0': '\0' }

class Unsupported extends Error {}

class Parser {
  i = 0
  constructor(readonly src: string) {}
  peek = () => this.src[this.i]
  eat = (s: string) => (this.src.startsWith(s, this.i) ? ((this.i += s.length), true) : false)

  alts(depth: number): Node[][] {
    if (depth > MAX_DEPTH) throw new Unsupported()
    const out = [this.seq(depth)]
    while (this.eat('|')) out.push(this.seq(depth))
    return out
  }

  seq(depth: number): Node[] {
    const out: Node[] = []
    while (this.i < this.src.length && this.peek() !== '|' && this.peek() !== ')') {
      const atom = this.atom(depth)
      out.push(this.quantified(atom))
    }
    return out
  }

  quantified(node: Node): Node {
    const c = this.peek()
    let q: [number, number] | undefined
    if (c === '*') q = [0, Infinity]
    else if (c === '+') q = [1, Infinity]
    else if (c === '?') q = [0, 1]
    if (q) this.i++
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i, this.i + 24))
      if (!m) return node
      this.i += m[0].length
      q = [Number(m[1]), m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3])]
    } else return node
    this.eat('?')
    if (node.t === 'start' || node.t === 'end') throw new Unsupported()
    return { t: 'rep', node, min: q[0], max: q[1] }
  }

  atom(depth: number): Node {
    const c = this.src[this.i++]!
    if (c === '^') return { t: 'start' }
    if (c === '$') return { t: 'end' }
    if (c === '.') return { t: 'class', options: POOL.filter((x) => !LINE(x)).slice(0, MAX_OPTIONS) }
    if (c === '[') return this.klass()
    if (c === '(') {
      if (this.eat('?')) {
        if (!this.eat(':') && !/^<[A-Za-z_$][\w$]*>/.test(this.src.slice(this.i))) throw new Unsupported()
        if (this.peek() === '<') this.i = this.src.indexOf('>', this.i) + 1
      }
      const alts = this.alts(depth + 1)
      if (!this.eat(')')) throw new Unsupported()
      return { t: 'group', alts }
    }
    if (c === '\\') {
      const e = this.escape()
      return typeof e === 'string' ? { t: 'lit', c: e } : { t: 'class', options: options([e.first], e.pred) }
    }
    if (c === '*' || c === '+' || c === '?' || c === ')') throw new Unsupported()
    return { t: 'lit', c }
  }

  /** After a backslash: a literal character, or a set (\d …). */
  escape(): string | { pred: Pred; first: string } {
    const c = this.src[this.i++]
    if (c === undefined) throw new Unsupported()
    if (Object.hasOwn(SETS, c)) return SETS[c]!
    if (Object.hasOwn(CONTROL, c)) return CONTROL[c]!
    const hex = c === 'x' ? /^[0-9a-fA-F]{2}/ : c === 'u' ? /^(\{[0-9a-fA-F]{1,6}\}|[0-9a-fA-F]{4})/ : undefined
    if (hex) {
      const m = hex.exec(this.src.slice(this.i))
      if (!m) throw new Unsupported()
      this.i += m[0].length
      return String.fromCodePoint(parseInt(m[0].replace(/[{}]/g, ''), 16))
    }
    // \b \B, back-references, \k<…>, \p{…}, \c…: not followed
    if (/[A-Za-z0-9]/.test(c)) throw new Unsupported()
    return c
  }

  klass(): Node {
    const negated = this.eat('^')
    const preds: Pred[] = []
    const named: string[] = []
    while (this.peek() !== ']') {
      if (this.i >= this.src.length) throw new Unsupported()
      const lo = this.classChar()
      if (typeof lo !== 'string') {
        preds.push(lo.pred)
        named.push(lo.first)
        continue
      }
      if (this.peek() === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        this.i++
        const hi = this.classChar()
        if (typeof hi !== 'string' || hi < lo) throw new Unsupported()
        preds.push((x) => x >= lo && x <= hi)
        named.push(lo, hi)
      } else {
        preds.push((x) => x === lo)
        named.push(lo)
      }
    }
    this.i++
    const inClass: Pred = (x) => preds.some((p) => p(x))
    const pred: Pred = negated ? (x) => !inClass(x) && !LINE(x) : inClass
    const opts = options(negated ? [] : named, pred)
    if (opts.length === 0) throw new Unsupported()
    return { t: 'class', options: opts }
  }

  classChar(): string | { pred: Pred; first: string } {
    const c = this.src[this.i++]!
    if (c !== '\\') return c
    if (this.peek() === 'b') return (this.i++, '\b')
    if (this.peek() === '-') return (this.i++, '-')
    return this.escape()
  }
}

/** What a class offers: the characters it names first, then the pool's, each once, if it matches them. */
function options(named: string[], pred: Pred): string[] {
  const out: string[] = []
  for (const c of [...named, ...POOL]) {
    if (out.length >= MAX_OPTIONS) break
    if (pred(c) && !out.includes(c)) out.push(c)
  }
  return out
}

/** Choices taken from a variant number: each choice point takes its digit in turn (mixed radix). */
interface Build {
  variant: number
  /** Characters still to add by repeating a quantified part past its least (to reach minLength). */
  grow: number
  steps: number
}

function build(nodes: Node[], b: Build): string {
  let s = ''
  for (const n of nodes) s += node(n, b)
  return s
}

function choose(n: number, b: Build): number {
  const i = b.variant % n
  b.variant = Math.floor(b.variant / n)
  return i
}

function node(n: Node, b: Build): string {
  // every step counted, so an empty part repeated a billion times ends too
  if (++b.steps > MAX_STEPS) throw new Unsupported()
  switch (n.t) {
    case 'lit':
      return n.c
    case 'class':
      return n.options[choose(n.options.length, b)]!
    case 'group':
      return build(n.alts[choose(n.alts.length, b)]!, b)
    case 'start':
    case 'end':
      throw new Unsupported()
    case 'rep': {
      let s = ''
      for (let i = 0; i < n.min; i++) s += node(n.node, b)
      for (let i = n.min; i < n.max && b.grow > 0; i++) {
        const more = node(n.node, b)
        if (more === '') break
        s += more
        b.grow -= more.length
      }
      return s
    }
  }
}

function parse(pattern: string): Node[][] | undefined {
  if (parsed.has(pattern)) return parsed.get(pattern)
  let alts: Node[][] | undefined
  try {
    const p = new Parser(pattern)
    alts = pattern.length > MAX_PATTERN ? undefined : p.alts(0)
    if (p.i !== pattern.length) alts = undefined
  } catch (e) {
    if (!(e instanceof Unsupported)) throw e
  }
  if (parsed.size >= MAX_PARSED) parsed.clear()
  parsed.set(pattern, alts)
  return alts
}

/**
 * A string `pattern` matches, of length from `min` to `max` where it can be (else the nearest it
 * can); `variant` picks other choices for another string (distinct items). Undefined when the
 * pattern is beyond the subset.
 */
export function patternExample(pattern: string, min: number, max: number, variant: number): string | undefined {
  const alts = parse(pattern)
  if (!alts) return undefined
  try {
    const b: Build = { variant, grow: 0, steps: 0 }
    const branch = alts[choose(alts.length, b)]!
    const anchoredStart = branch[0]?.t === 'start'
    const anchoredEnd = branch[branch.length - 1]?.t === 'end'
    const body = branch.slice(anchoredStart ? 1 : 0, anchoredEnd ? -1 : undefined)
    const state = { ...b }
    let s = build(body, b)
    if (s.length < min) {
      if (!anchoredEnd) return s + 'x'.repeat(min - s.length)
      if (!anchoredStart) return 'x'.repeat(min - s.length) + s
      // both ends held: repeat quantified parts past their least
      s = build(body, { ...state, grow: min - s.length })
    }
    // past max there is no string to give that both allow: the pattern's is kept
    return s
  } catch (e) {
    if (e instanceof Unsupported) return undefined
    throw e
  }
}
