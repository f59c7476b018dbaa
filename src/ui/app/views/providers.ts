// Providers: each provider's deployments and their state (deployments.ts); which upstream serves
// each model family (or the built-in mock), and for the last hour of records the requests, the
// error rate and the median latency per provider.
import * as api from '../api.ts'
import { h, replace } from '../dom.ts'
import { ms, num, pct } from '../fmt.ts'
import type { Providers, Session } from '../types.ts'
import { deploymentsSection } from './deployments.ts'

export function providersView(root: HTMLElement, session: Session): () => void {
  const body = h('div', null, h('p', { class: 'muted' }, 'Loading…'))
  const deployments = deploymentsSection(session.role === 'admin')
  replace(root, h('h2', null, 'Providers'), h('h3', null, 'Deployments'), deployments.el, h('h3', null, 'Model families'), body)
  let stopped = false
  api.get<Providers>('/api/v1/dashboard/providers').then((p) => {
    if (stopped) return
    replace(body,
      h('table', { class: 'families' },
        h('thead', null, h('tr', null, h('th', null, 'model family'), h('th', null, 'served by'))),
        h('tbody', null, p.families.map((f) => h('tr', null, h('td', null, f.family), h('td', null, f.served_by === 'mock' ? 'built-in mock provider' : `upstream${f.base_url ? ' ' + f.base_url : ''}`))))),
      h('h3', null, 'Last hour'),
      p.stats.length === 0
        ? h('p', { class: 'muted' }, 'No requests in the last hour.')
        : h('table', { class: 'provider-stats' },
            h('thead', null, h('tr', null, h('th', null, 'provider'), h('th', { class: 'n' }, 'requests'), h('th', { class: 'n' }, 'errors'), h('th', { class: 'n' }, 'error rate'), h('th', { class: 'n' }, 'p50 latency'))),
            h('tbody', null, p.stats.map((s) => h('tr', { 'data-provider': s.provider }, h('td', null, s.provider), h('td', { class: 'n' }, num(s.requests)), h('td', { class: 'n' }, num(s.errors)), h('td', { class: 'n' }, pct(s.error_rate)), h('td', { class: 'n' }, ms(s.p50_latency_ms)))))))
  }, (e: Error) => !stopped && replace(body, h('p', { class: 'error' }, e.message)))
  return () => {
    stopped = true
    deployments.stop()
  }
}
