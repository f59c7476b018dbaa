// `x-switchyard-cassette: NAME` on a client's request: its upstream exchanges go to
// NAME.jsonl in the cassette dir (one file per test) instead of the model's file. The name
// becomes a file name, so it is a plain one: no path, nothing hidden.
import { HttpError } from '../http/errors.ts'

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/** The checked cassette name, or undefined when the header is absent; a 400 for a name that is not a plain file name. */
export function cassetteHeader(headers: Headers): string | undefined {
  const name = headers.get('x-switchyard-cassette')?.trim()
  if (!name) return undefined
  if (!NAME.test(name)) {
    throw new HttpError(400, 'x-switchyard-cassette: a cassette name is 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit (it names a file in the cassette dir)')
  }
  return name
}
