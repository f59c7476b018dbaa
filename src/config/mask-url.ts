// A URL as the banner, `switchyard config`, the dashboard and the logs may show it.

/**
 * A URL as it may be shown (`redis://user:***@host`, `https://proxy/v1?token=***`): a password in
 * it masked (the user kept), and the values of its query, where a proxy's token may ride.
 */
export function maskUrl(u: string): string {
  try {
    const url = new URL(u)
    if (!url.password && !url.search) return url.toString()
    // built by hand: URL would percent-encode the mask
    const user = url.username ? decodeURIComponent(url.username) : ''
    const auth = url.password ? `${user}:***@` : user ? `${user}@` : ''
    const query = url.search ? `?${[...new Set(url.searchParams.keys())].map((k) => `${encodeURIComponent(k)}=***`).join('&')}` : ''
    return `${url.protocol}//${auth}${url.host}${url.pathname === '/' ? '' : url.pathname}${query}`
  } catch {
    return '(unparsable URL)'
  }
}
