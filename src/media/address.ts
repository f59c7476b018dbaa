// Which addresses the gateway may fetch a client's URL from. An allow-list, not a
// block-list: only ipaddr.js's `unicast` class (ordinary public addresses) passes, so any
// range it knows as special — private, loopback, linkLocal (169.254/16, cloud metadata),
// carrierGradeNat (100.64/10), uniqueLocal, unspecified, multicast, broadcast, reserved,
// and the IPv6 forms that embed an IPv4 address (rfc6052 NAT64, 6to4, teredo) — is
// refused without being listed here. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is
// judged as the IPv4 address it carries. Messages name the class as ipaddr.js does.
import ipaddr from 'ipaddr.js'

// Deprecated IPv4-compatible addresses (::a.b.c.d) carry an IPv4 address too, yet
// ipaddr.js classes them as unicast; nothing public lives there.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96')

/** The address in canonical form, IPv4-mapped IPv6 unwrapped; null when not an address. */
export function canonicalAddress(address: string): string | null {
  if (!ipaddr.isValid(address)) return null
  const ip = ipaddr.parse(address)
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) return (ip as ipaddr.IPv6).toIPv4Address().toString()
  return ip.toString()
}

/** Why `address` may not be fetched from, or null when it is an ordinary public address. */
export function refusedAddress(address: string): string | null {
  const canonical = canonicalAddress(address)
  if (canonical === null) return `${address.slice(0, 64)} is not an IP address`
  const ip = ipaddr.parse(canonical)
  const range = ip.range()
  if (range !== 'unicast') return `${address} is a ${range} address${range === 'linkLocal' && ip.kind() === 'ipv4' ? ' (cloud metadata lives there)' : ''}`
  if (ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE)) return `${address} is an IPv4-compatible address`
  return null
}
