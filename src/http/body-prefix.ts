// The first characters of a body that only a message is wanted from (an upstream's error page,
// a JSON body where a stream was asked for): read to `max` characters and no further, so that
// a body of any size (a compressed one that inflates to gigabytes) costs at most that much.

/** Up to about `max` characters of `res`'s body, as text; the rest is left unread and the body cancelled. */
export async function bodyPrefix(res: Response, max: number): Promise<string> {
  const body = res.body
  if (!body) return ''
  const reader = body.getReader()
  const dec = new TextDecoder()
  let text = ''
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      text += dec.decode(r.value, { stream: true })
      if (text.length >= max) break
    }
  } finally {
    reader.cancel().catch(() => {})
  }
  return text.length > max ? text.slice(0, max) : text
}
