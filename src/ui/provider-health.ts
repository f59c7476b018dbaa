// The dashboard's table of providers: each configured provider (and the built-in mock) with
// the catalog's deployments on it, each deployment's state and this instance's last hour. Read
// from memory only (the config, the catalog, the health counters), so it costs no query.
// Never a key: a provider shows how many keys its pool holds, and only to the admin.
import type { Catalog } from '../config/catalog.ts'
import { maskUrl } from '../config/load.ts'
import { MOCK_ID, type Deployment, type ProviderConfig, type ProviderKind } from '../config/providers.ts'
import { deploymentKey, type DeploymentHealth, type DeploymentReport } from '../routing/health.ts'

export interface DeploymentView {
  model: string
  upstream_id: string
  weight: number
  priority: number
  /** ok; cooling (until `cooling_until`); half-open (its probe goes next); probing (the probe is out). */
  state: DeploymentReport['state']
  /** While cooling: when it may be probed again, epoch seconds; otherwise null. */
  cooling_until: number | null
  consecutive_failures: number
  /** This instance's last hour; null for an API key (the counts are every account's). */
  last_hour: { requests: number; errors: number; failovers: number; p50_ms: number | null } | null
}

export interface ProviderView {
  id: string
  kind: ProviderKind
  /** The admin's only (the upstream's address is the operator's business); null for the mock. */
  base_url: string | null
  /** How many keys its pool holds; the admin's only (null for the mock, which takes none). */
  keys: number | null
  deployments: DeploymentView[]
}

interface Row {
  model: string
  d: Deployment
}

/** Every deployment on each provider: the catalog's models first, then any other one health has seen (an alias, an unlisted model). */
function rowsByProvider(catalog: Catalog, seen: Iterable<string>): Map<string, Row[]> {
  const out = new Map<string, Row[]>()
  const keys = new Set<string>()
  const add = (model: string, d: Deployment) => {
    keys.add(deploymentKey(d))
    const list = out.get(d.provider)
    if (list) list.push({ model, d })
    else out.set(d.provider, [{ model, d }])
  }
  for (const m of catalog.list()) for (const d of m.deployments) add(m.id, d)
  for (const key of seen) {
    if (keys.has(key)) continue
    const cut = key.indexOf('/')
    const provider = key.slice(0, cut)
    const upstreamId = key.slice(cut + 1)
    const m = catalog.resolve(upstreamId)
    const d = m?.deployments.find((x) => deploymentKey(x) === key)
    add(m?.id ?? upstreamId, d ?? { provider, upstreamId, weight: 1, priority: 1 })
  }
  return out
}

function deploymentView(r: Row, report: DeploymentReport | undefined, admin: boolean): DeploymentView {
  const h = report?.lastHour
  return {
    model: r.model,
    upstream_id: r.d.upstreamId,
    weight: r.d.weight,
    priority: r.d.priority,
    state: report?.state ?? 'ok',
    cooling_until: report?.coolingUntil === undefined ? null : Math.ceil(report.coolingUntil / 1000),
    consecutive_failures: report?.consecutiveFailures ?? 0,
    last_hour: admin ? { requests: h?.requests ?? 0, errors: h?.errors ?? 0, failovers: h?.failovers ?? 0, p50_ms: h?.p50Ms ?? null } : null,
  }
}

export function providerHealth(providers: Record<string, ProviderConfig>, catalog: Catalog, health: DeploymentHealth, admin: boolean): { providers: ProviderView[] } {
  const reports = new Map(health.snapshot().map((r) => [r.key, r]))
  // the deployments health has met beyond the catalog's are the ids clients named (another
  // account's fine-tune, an alias): the admin's to see, not every key's
  const rows = rowsByProvider(catalog, admin ? reports.keys() : [])
  const view = (id: string, kind: ProviderKind, p?: ProviderConfig): ProviderView => ({
    id,
    kind,
    // as the banner shows it: a password or a query token in it masked
    base_url: admin && p ? maskUrl(p.baseUrl) : null,
    keys: admin && p ? p.apiKeys.length : null,
    deployments: (rows.get(id) ?? []).map((r) => deploymentView(r, reports.get(deploymentKey(r.d)), admin)),
  })
  return { providers: [...Object.values(providers).map((p) => view(p.id, p.kind, p)), view(MOCK_ID, 'mock')] }
}
