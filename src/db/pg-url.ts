// A database URL as it may be shown: the password masked.

export function maskUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'postgres://(unparsable URL)'
  }
}
