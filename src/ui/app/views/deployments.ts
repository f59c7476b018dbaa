// The providers' deployments: each configured provider (and the built-in mock) with the models
// it serves, whether each deployment takes traffic or rests after failures, and this instance's
// last hour of it (the admin only). Polled, so that a rest ending shows without a reload.
import * as api from '../api.ts'
import { h, replace } from '../dom.ts'
import { ms, num, time } from '../fmt.ts'
import type { DeploymentRow, ProviderDeployments } from '../types.ts'

const POLL_MS = 5000

function stateText(d: DeploymentRow): string {
  if (d.state === 'cooling') return `cooling until ${time(d.cooling_until)}`
  if (d.state === 'half-open') return 'probe next'
  return d.state
}

function provider(p: ProviderDeployments['providers'][number], counts: boolean) {
  const where = [p.kind, p.base_url, p.keys === null ? null : `${num(p.keys)} key${p.keys === 1 ? '' : 's'}`].filter(Boolean).join(' · ')
  const span = counts ? 9 : 5
  return [
    h('tr', { class: 'provider', 'data-provider-id': p.id }, h('th', { colspan: span }, h('b', null, p.id), ' ', h('span', { class: 'muted' }, where))),
    p.deployments.length === 0
      ? h('tr', null, h('td', { colspan: span, class: 'muted' }, 'No model is served here.'))
      : p.deployments.map((d) =>
          h('tr', { 'data-deployment': `${p.id}/${d.upstream_id}`, 'data-state': d.state },
            h('td', { class: 'name', title: d.model }, d.model), h('td', { class: 'mono' }, d.upstream_id), h('td', { class: 'n' }, num(d.weight)), h('td', { class: 'n' }, num(d.priority)),
            h('td', null, h('span', { class: `badge ${d.state}`, title: `${num(d.consecutive_failures)} failures in a row` }, stateText(d))),
            counts && d.last_hour && [
              h('td', { class: 'n' }, num(d.last_hour.requests)), h('td', { class: 'n' }, num(d.last_hour.errors)),
              h('td', { class: 'n' }, num(d.last_hour.failovers)), h('td', { class: 'n' }, ms(d.last_hour.p50_ms)),
            ])),
  ]
}

/** The section, filled and kept fresh until `stop`. */
export function deploymentsSection(admin: boolean): { el: HTMLElement; stop: () => void } {
  const el = h('section', { class: 'deployments' }, h('p', { class: 'muted' }, 'Loading…'))
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false
  async function load() {
    try {
      const r = await api.get<ProviderDeployments>('/api/v1/dashboard/deployments')
      if (stopped) return
      const counts = admin
      replace(el,
        h('table', { class: 'deployments' },
          h('thead', null, h('tr', null, ['model', 'upstream id'].map((c) => h('th', null, c)), ['weight', 'priority'].map((c) => h('th', { class: 'n' }, c)), h('th', null, 'state'),
            counts && ['requests', 'errors', 'failovers', 'p50 latency'].map((c) => h('th', { class: 'n' }, c)))),
          h('tbody', null, r.providers.map((p) => provider(p, counts)))),
        h('p', { class: 'muted' }, counts ? `Last hour on this instance, as of ${time(r.at)}.` : `As of ${time(r.at)}.`))
    } catch (e) {
      if (!stopped) replace(el, h('p', { class: 'error' }, (e as Error).message))
    }
    if (!stopped) timer = setTimeout(() => void load(), POLL_MS)
  }
  void load()
  return {
    el,
    stop() {
      stopped = true
      clearTimeout(timer)
    },
  }
}
