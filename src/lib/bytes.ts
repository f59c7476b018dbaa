// Buffer's own copy and UTF-8 write, called on a Uint8Array as it is: native, and no Buffer view
// is made of the array (nor its ArrayBuffer's object).

const COPY = Buffer.prototype.copy
const WRITE = Buffer.prototype.write

/** Copies b[from, to) into `target` at `at`; the bytes copied. */
export const copyBytes = (b: Uint8Array, target: Uint8Array, at: number, from: number, to: number): number => COPY.call(b as Buffer, target, at, from, to)

/** `text` written into `target` at `at` as UTF-8; the bytes written (the caller has made room). */
export const writeUtf8 = (target: Uint8Array, text: string, at: number): number => WRITE.call(target as Buffer, text, at, 'utf8')
