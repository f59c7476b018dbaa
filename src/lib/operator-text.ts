// Text an operator reads back (a key's name or account, an upload's filename): one rule table
// for all of them. Refused: what a terminal or a log reader acts on (the C0 and C1 controls: 0x9b
// opens an escape on some terminals, which `keys list` and the logs reach; U+2028/U+2029 break a
// line as a newline does), what PostgreSQL's text cannot hold (NUL) or stores as something else
// (half of a surrogate pair became U+FFFD), and the invisible format characters, with which two
// names that read the same are two names: zero-width spaces, joiners between Latin letters, word
// joiners and invisible operators, the byte order mark, the soft hyphen, the bidi controls
// (embeddings, overrides, isolates, marks) and the tag characters. A joiner in a script that
// needs it (Persian, the Indic scripts), inside an emoji sequence (👩‍💻), and the tags of a
// flag (🏴 England) draw something, so those are kept.

/** The control characters and line separators. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/**
 * The invisible format characters (Unicode's Cf that draw nothing where they stand), and the
 * zero-width joiner and non-joiner after an ASCII character or at the start: Persian, Arabic and
 * the Indic scripts need the joiners between their letters (as emoji sequences do between
 * pictographs), where they change how the letters are drawn; between Latin letters they only hide.
 */
const INVISIBLE = /[\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{e0001}\u{e0020}-\u{e007f}]|(?:^|[\u0000-\u007f])[\u200c\u200d]/u

/** A flag's tags (🏴 England), which draw. */
const DRAWN = /(?<=\u{1f3f4})[\u{e0020}-\u{e007e}]+\u{e007f}/gu

/** No lone surrogate: the text has a UTF-8 form (stored, a lone one would become U+FFFD). */
export const wellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed()

/** The rules, in order: the first `v` breaks says what is wrong with it. */
const RULES: [breaks: (v: string) => boolean, says: string][] = [
  [(v) => v.includes('\0'), 'holds a NUL character (\\u0000), which no stored text may'],
  [(v) => CONTROL.test(v), 'must not contain control characters (tabs, line breaks, escapes)'],
  [(v) => !wellFormed(v), 'holds half of a surrogate pair (a \\ud800–\\udfff escape alone), which is no character'],
  [(v) => INVISIBLE.test(v.replace(DRAWN, '')), 'must not contain invisible format characters (zero-width spaces and joiners, bidi controls, soft hyphens, byte order marks), with which two names that look the same differ'],
]

/** What is wrong with `v` as text an operator reads back, or undefined. */
export function operatorTextFault(v: string): string | undefined {
  for (const [breaks, says] of RULES) if (breaks(v)) return says
  return undefined
}
