// Which upstream calls a request may make, in order: its model's deployments (by priority,
// then weight, resting ones left out; src/routing/choose.ts), then each model in its
// `fallbacks`. A fallback of the same family takes the request's plan as it is (the adapter
// sends the deployment's model id); one of the other family is decoded anew, and left out when
// the request cannot go there (a parameter the cross-family mode refuses). A fallback that lacks
// what the request needs (images, tools: routing/needs.ts) is left out too. When every
// deployment of all of them rests, the one whose rest ends first is still tried: a request is
// never refused without an upstream call.
import type { Catalog, CatalogModel } from '../config/catalog.ts'
import type { Deployment } from '../config/providers.ts'
import type { Lack } from '../config/models.ts'
import { lastResort, order } from '../routing/choose.ts'
import { canTake, needsOf } from '../routing/needs.ts'
import { deploymentKey, type DeploymentHealth } from '../routing/health.ts'
import type { DecodeContext, Plan, SurfaceSpec } from './surface.ts'

export interface Candidate {
  /** The plan to send: the request's own, or a fallback model's. */
  plan: Plan
  deployment: Deployment
  /** The catalog entry as this deployment is sent it (its upstream id). */
  model: CatalogModel
}

/** The request's plan, then one per usable fallback model, made only when reached. */
async function* plans(catalog: Catalog, spec: SurfaceSpec, raw: unknown, plan: Plan, cx: DecodeContext): AsyncGenerator<Plan> {
  yield plan
  // read once, when a fallback that lacks something is reached
  let needs: Set<Lack> | undefined
  for (const id of plan.model.fallbacks) {
    const m = catalog.resolve(id)
    if (!m || !m.surfaces.includes(spec.surface)) continue
    if (m.lacks && !canTake(m.lacks, (needs ??= needsOf(plan.body, plan.prompt)))) continue
    if (m.family === plan.model.family) {
      yield { ...plan, model: m }
      continue
    }
    let other: Plan
    try {
      other = await spec.decode({ ...(raw as Record<string, unknown>), model: id }, cx)
    } catch {
      continue
    }
    yield other
  }
}

const asSent = (model: CatalogModel, d: Deployment): CatalogModel => (d.upstreamId === model.upstreamId ? model : { ...model, upstreamId: d.upstreamId })

/**
 * The calls to try, in order; each deployment's one probe after a rest is claimed as it is
 * reached (maySend), so a candidate that is never tried holds none. A model of one deployment
 * and no fallbacks (the usual case) has one call whatever its health: it is its own last
 * resort. Its probe is still claimed, and the list is made without the generators.
 */
export function candidates(health: DeploymentHealth, catalog: Catalog, spec: SurfaceSpec, raw: unknown, plan: Plan, cx: DecodeContext): Candidate[] | AsyncIterable<Candidate> {
  const { deployments, fallbacks } = plan.model
  if (deployments.length !== 1 || fallbacks.length !== 0) return walk(health, catalog, spec, raw, plan, cx)
  const d = deployments[0]!
  health.maySend(deploymentKey(d))
  return [{ plan, deployment: d, model: asSent(plan.model, d) }]
}

async function* walk(health: DeploymentHealth, catalog: Catalog, spec: SurfaceSpec, raw: unknown, plan: Plan, cx: DecodeContext): AsyncGenerator<Candidate> {
  const resting: Candidate[] = []
  let offered = 0
  for await (const p of plans(catalog, spec, raw, plan, cx)) {
    for (const d of order(p.model.deployments, health)) {
      if (!health.maySend(deploymentKey(d))) continue
      offered++
      yield { plan: p, deployment: d, model: asSent(p.model, d) }
    }
    if (offered === 0) for (const d of p.model.deployments) resting.push({ plan: p, deployment: d, model: asSent(p.model, d) })
  }
  if (offered > 0) return
  const d = lastResort(resting.map((c) => c.deployment), health)
  const c = d && resting.find((r) => r.deployment === d)
  if (c) yield c
}
