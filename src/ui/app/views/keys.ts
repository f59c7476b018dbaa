// Keys (admin): create (the secret is shown once, here, and kept nowhere), disable, enable,
// add credits, set the per-key rate limit, rotate (a new secret, shown once as on creation; the
// old one stops working at once, or after the grace period chosen beside the button, which can be
// ended early); credits against spend for each key.
import * as api from '../api.ts'
import { h, replace, setWidth } from '../dom.ts'
import { time, usd } from '../fmt.ts'
import type { List, PublicKey } from '../types.ts'

/** How long a rotated key's old secret may keep working, as the dashboard offers it: seconds, words. */
const GRACES: [number, string][] = [[0, 'at once'], [3600, '1 hour'], [86_400, '1 day'], [7 * 86_400, '7 days']]

export function keysView(root: HTMLElement): () => void {
  const table = h('tbody')
  const secret = h('div', { class: 'secret', hidden: true })
  const msg = h('p', { class: 'muted' })
  const form = h('form', { class: 'controls create-key', onsubmit: (e: Event) => void create(e) },
    h('label', null, 'name ', h('input', { name: 'name', required: true, maxlength: 200 })),
    h('label', null, 'account ', h('input', { name: 'account', placeholder: 'default', maxlength: 200 })),
    h('label', null, 'credits $ ', h('input', { name: 'credits', type: 'number', min: 0, step: 'any', placeholder: 'unlimited' })),
    h('label', null, 'rpm ', h('input', { name: 'rpm', type: 'number', min: 1, step: 1, placeholder: 'default' })),
    h('button', { type: 'submit' }, 'Create key'))
  replace(root, h('h2', null, 'Keys'), form, secret, msg, h('table', { class: 'keys' },
    h('thead', null, h('tr', null, ['name', 'id', 'account', 'status', 'credits vs spend', 'rpm', 'last used', ''].map((c) => h('th', null, c)))), table))

  const fail = (e: unknown) => (msg.textContent = (e as Error).message)

  async function create(e: Event) {
    e.preventDefault()
    const f = new FormData(form)
    const opt = (k: string) => (String(f.get(k) ?? '').trim() === '' ? undefined : Number(f.get(k)))
    const body = { name: String(f.get('name')).trim(), account: String(f.get('account') ?? '').trim() || undefined, credits: opt('credits'), rpm: opt('rpm') }
    try {
      const k = await api.send<PublicKey & { key: string }>('POST', '/admin/v1/keys', body)
      form.reset()
      await shown(k, 'created.')
    } catch (err) {
      fail(err)
    }
  }

  /** A new secret, shown once: only this element holds it, and Done removes it. */
  async function shown(k: PublicKey & { key: string }, what: string) {
    replace(secret,
      h('p', null, h('b', null, 'Key "', h('bdi', null, k.name), '" ', what), ' Copy it now: it is shown this once and cannot be shown again.'),
      h('code', { class: 'key-secret' }, k.key),
      h('button', { onclick: () => void navigator.clipboard?.writeText(k.key).catch(() => {}) }, 'Copy'),
      h('button', { class: 'done', onclick: () => ((secret.hidden = true), secret.replaceChildren()) }, 'Done'))
    secret.hidden = false
    await load()
  }

  async function rotate(k: PublicKey, grace: number) {
    const when = grace === 0 ? 'stops working at once' : `keeps working for ${GRACES.find(([s]) => s === grace)?.[1] ?? `${grace} s`}, then stops`
    if (!confirm(`Rotate the secret of "${k.name}"? Its current secret ${when}.`)) return
    try {
      const made = await api.send<PublicKey & { key: string }>('POST', `/admin/v1/keys/${k.id}/rotate`, { grace_period_seconds: grace })
      await shown(made, made.previous_key_expires_at === null ? 'has a new secret; the old one no longer works.' : `has a new secret; the old one works until ${time(made.previous_key_expires_at)}.`)
    } catch (err) {
      fail(err)
    }
  }

  const act = (path: string, body?: unknown, method = 'POST') => () => void api.send(method, path, body).then(load, fail)

  function row(k: PublicKey) {
    const fill = h('div', { class: 'fill' + (k.credits !== null && k.spent >= k.credits ? ' over' : '') })
    setWidth(fill, k.credits ? k.spent / k.credits : 0)
    const credit = h('input', { type: 'number', min: 0, step: 'any', placeholder: 'USD', size: 6, 'aria-label': `credit ${k.name}` })
    const rpm = h('input', { type: 'number', min: 1, step: 1, placeholder: 'default', size: 6, value: k.rpm ?? '', 'aria-label': `rpm ${k.name}` })
    const grace = h('select', { class: 'grace', 'aria-label': `old secret of ${k.name} after a rotation` }, GRACES.map(([s, label]) => h('option', { value: s }, s === 0 ? 'old: stops' : `old: +${label}`)))
    return h('tr', { 'data-key': k.id, class: k.status },
      h('td', null, k.name), h('td', { class: 'mono' }, k.id, ' ', h('span', { class: 'muted' }, k.key_prefix + '…')), h('td', null, k.account),
      h('td', null, k.status, k.previous_key_expires_at === null ? null : h('div', { class: 'muted previous' }, `old secret until ${time(k.previous_key_expires_at)} `,
        h('button', { class: 'revoke-previous', onclick: act(`/admin/v1/keys/${k.id}/revoke-previous`) }, 'End now'))),
      h('td', null, h('div', { class: 'bar small' }, fill), h('span', { class: 'spend' }, `${usd(k.spent)} of ${k.credits === null ? 'unlimited' : usd(k.credits)}`)),
      h('td', null, rpm, h('button', { onclick: () => act(`/admin/v1/keys/${k.id}`, { rpm: rpm.value === '' ? null : Number(rpm.value) }, 'PATCH')() }, 'Set')),
      h('td', null, time(k.last_used_at)),
      h('td', null, h('div', { class: 'row-actions' },
        k.status === 'active'
          ? h('button', { onclick: act(`/admin/v1/keys/${k.id}/disable`) }, 'Disable')
          : h('button', { onclick: act(`/admin/v1/keys/${k.id}/enable`) }, 'Enable'),
        credit, h('button', { onclick: () => (Number(credit.value) > 0 ? act(`/admin/v1/keys/${k.id}/credit`, { amount: Number(credit.value) })() : fail(new Error('credit: enter an amount above 0'))) }, 'Add credit'),
        grace, h('button', { class: 'rotate', onclick: () => void rotate(k, Number(grace.value)) }, 'Rotate'))))
  }

  async function load() {
    try {
      const list = await api.get<List<PublicKey>>('/admin/v1/keys')
      replace(table, list.data.map(row))
      msg.textContent = ''
    } catch (e) {
      fail(e)
    }
  }

  void load()
  return () => {}
}
