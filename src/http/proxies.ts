// Which peers are the operator's own proxies, whose X-Forwarded-For names the client: addresses
// and CIDR ranges (10.0.0.0/8, fd00::/8), IPv4 and IPv6. An IPv4 entry also matches the address
// as a dual-stack socket reports it (::ffff:10.0.0.5), and IPv6 matches whatever its spelling.
import { BlockList, isIP } from 'node:net'

/** Why an entry is neither an address nor a range; undefined when it is one. */
export function proxyEntryProblem(entry: string): string | undefined {
  const [address = '', bits, more] = entry.split('/')
  const version = isIP(address)
  const most = version === 4 ? 32 : 128
  if (version === 0 || more !== undefined || (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > most))) {
    return `expected an IP address or a CIDR range such as 10.0.0.0/8, got ${JSON.stringify(entry.slice(0, 60))}`
  }
  return undefined
}

/** Whether an address is one of the entries (each checked by proxyEntryProblem). */
export function proxyMatcher(entries: readonly string[]): (address: string) => boolean {
  if (entries.length === 0) return () => false
  const list = new BlockList()
  for (const entry of entries) {
    const [address, bits] = entry.split('/') as [string, string | undefined]
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6'
    if (bits === undefined) list.addAddress(address, type)
    else list.addSubnet(address, Number(bits), type)
  }
  return (address) => {
    const version = isIP(address)
    return version !== 0 && list.check(address, version === 4 ? 'ipv4' : 'ipv6')
  }
}
