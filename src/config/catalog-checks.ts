// What buildCatalog refuses of a config's models beside their deployments (upstreams.ts):
// aliases that take another model's name, fallbacks to no model, prices for no model a request
// can name. Each names the field and what to configure instead.
import { ConfigError } from './errors.ts'
import type { Config } from './load.ts'
import { MODELS } from './models.ts'

/** The catalog as the checks read it (config/catalog.ts): the entry a name resolves to. */
interface Resolves {
  resolve(id: string): { id: string; upstreamId: string } | undefined
}

/**
 * A configured alias names its own model only. One that is a name of another model of the
 * built-in table (its id, or a dated id it still has) would take that model's requests without a
 * word, while the listing still showed the model. (Names given twice within the config: checkDeployments.)
 */
export function checkAliases(models: Config['models']): void {
  const configured = new Map(models.map((m) => [m.id, m]))
  const taken = new Map<string, string>()
  for (const r of MODELS) for (const n of [r.id, ...(configured.get(r.id)?.aliases ?? r.aliases ?? [])]) taken.set(n, r.id)
  models.forEach((m, i) =>
    m.aliases?.forEach((a, j) => {
      const owner = taken.get(a)
      if (owner === undefined || owner === m.id) return
      const what = owner === a ? 'a model of the built-in catalog' : `a dated id of the built-in catalog's ${owner}`
      throw new ConfigError(`models[${i}].aliases[${j}]: "${a}" is ${what}, and an alias names only its own model; to serve ${a} from elsewhere, configure it as a model of its own ({ id: ${a}, … } with its upstream_id or deployments)`)
    }),
  )
}

/** Every fallback names a model the catalog serves, other than the model itself. */
export function checkFallbacks(catalog: Resolves, models: Config['models']): void {
  models.forEach((m, i) =>
    m.fallbacks?.forEach((id, j) => {
      const field = `models[${i}].fallbacks[${j}]`
      const target = catalog.resolve(id)
      if (!target) throw new ConfigError(`${field}: unknown model "${id}"`)
      if (target.id === m.id) throw new ConfigError(`${field}: ${m.id} cannot fall back to itself`)
    }),
  )
}

/**
 * A price override names a model a request can name, as its prices are looked up: by the model's
 * id, or the id it goes upstream as (a dated id, a configured upstream_id). One for no such
 * model (a typo), or under an alias the config gives, would price nothing, without a word.
 */
export function checkOverrides(catalog: Resolves, config: Pick<Config, 'models' | 'pricing'>): void {
  const sentAs = new Set(config.models.flatMap((m) => m.upstream_id ?? []))
  // a deployment's own upstream id (an Azure deployment's name): its model's id is what prices it
  const deployed = new Map(config.models.flatMap((m) => (m.deployments ?? []).flatMap((d) => (d.upstream_id === undefined ? [] : [[d.upstream_id, m.id] as const]))))
  for (const id of Object.keys(config.pricing.overrides)) {
    if (sentAs.has(id)) continue
    const m = catalog.resolve(id)
    const field = `pricing.overrides.${id}`
    const owner = deployed.get(id)
    if (!m && owner !== undefined) throw new ConfigError(`${field}: "${id}" is a deployment's upstream id, and its requests are priced under their model's id: give the price as pricing.overrides.${owner}, or as the model's own price`)
    if (!m) throw new ConfigError(`${field}: unknown model "${id}": neither the catalog, the config's models nor the price library has it, and it is not of a family's naming (gpt-…, o1…, chatgpt-…, codex-…, claude-…, mock-…), so no request could name it`)
    if (m.id !== id && m.upstreamId !== id) throw new ConfigError(`${field}: "${id}" is an alias of ${m.id}, whose requests are priced under its id: give the price as pricing.overrides.${m.id}, or as the model's own price`)
  }
}
