// Generations: the newest records first, filtered by model, status, endpoint and key, a page
// at a time (GET /api/v1/generations without id). A row opens to the record's detail.
import * as api from '../api.ts'
import { h, replace } from '../dom.ts'
import { isolated, ms, num, time, usd } from '../fmt.ts'
import type { Generation, List, PublicKey, Session } from '../types.ts'

const ENDPOINTS = ['openai.chat.completions', 'openai.responses', 'anthropic.messages']

export function generationsView(root: HTMLElement, session: Session): () => void {
  const filter = { model: '', status: '', endpoint: '', key: '' }
  const rows = h('tbody')
  const more = h('button', { class: 'more', hidden: true, onclick: () => void load(true) }, 'Load more')
  const detail = h('aside', { class: 'detail', hidden: true })
  const note = h('p', { class: 'muted' })
  let last: string | null = null
  let seq = 0

  let typing: ReturnType<typeof setTimeout> | undefined
  const field = (name: keyof typeof filter, el: HTMLInputElement | HTMLSelectElement) => {
    el.name = name
    const apply = () => {
      if (filter[name] === el.value.trim()) return
      filter[name] = el.value.trim()
      void load(false)
    }
    // a text field filters as one types, once the typing pauses
    if (el instanceof HTMLInputElement) el.addEventListener('input', () => (clearTimeout(typing), (typing = setTimeout(apply, 250))))
    el.addEventListener('change', apply)
    return h('label', null, name, ' ', el)
  }
  const choices = (values: string[], any: string) => h('select', null, h('option', { value: '' }, any), values.map((v) => h('option', { value: v }, v)))
  const keySelect = choices([], 'any key')
  if (session.role === 'admin') {
    void api.get<List<PublicKey>>('/admin/v1/keys').then((l) => keySelect.append(...l.data.map((k) => h('option', { value: k.id }, `${isolated(k.name)} (${k.id})`)))).catch(() => {})
  }

  replace(root,
    h('h2', null, 'Generations'),
    h('div', { class: 'controls' },
      field('model', h('input', { type: 'text', placeholder: 'any model', size: 18 })),
      field('status', choices(['ok', 'error'], 'any status')),
      field('endpoint', choices(ENDPOINTS, 'any endpoint')),
      session.role === 'admin' ? field('key', keySelect) : null),
    h('div', { class: 'split' },
      h('div', { class: 'grow' },
        h('table', { class: 'generations' },
          h('thead', null, h('tr', null, ['time', 'model', 'endpoint', 'key', 'status', 'tokens', 'cost', 'latency'].map((c) => h('th', null, c)))),
          rows),
        note, more),
      detail))

  function open(g: Generation) {
    const u = g.usage
    const kv = (k: string, v: string | number) => [h('dt', null, k), h('dd', null, String(v))]
    replace(detail,
      h('h3', null, g.model, h('button', { class: 'close', title: 'close', onclick: () => (detail.hidden = true) }, '×')),
      h('dl', null,
        kv('id', g.id), kv('gateway id', g.gateway_id), kv('time', time(g.created_at)), kv('endpoint', g.endpoint), kv('stream', g.stream ? 'yes' : 'no'),
        kv('key', g.api_key_id), kv('account', g.account), kv('provider', g.provider),
        kv('latency', ms(g.latency_ms)), kv('time to first token', ms(g.time_to_first_token_ms)),
        kv('prompt tokens', num(u.prompt_tokens)), kv('  of which cache read', num(u.cache_read_input_tokens)), kv('  of which cache write', num(u.cache_creation_input_tokens)),
        // what else the cost counts, where the reply had any
        some(u.cache_write_1h_tokens, (n) => kv('    of which for 1 hour', num(n))), some(u.audio_input_tokens, (n) => kv('  of which audio', num(n))),
        kv('completion tokens', num(u.completion_tokens)), kv('  of which reasoning', num(u.completion_tokens_details?.reasoning_tokens ?? null)),
        some(u.audio_output_tokens, (n) => kv('  of which audio', num(n))),
        kv('total tokens', num(u.total_tokens)),
        some(u.web_searches, (n) => kv('web searches', num(n))), some(u.file_searches, (n) => kv('file searches', num(n))),
        u.image_tool ? kv('image tool', imageTool(u.image_tool)) : null,
        kv('cost', g.unpriced ? 'unpriced' : usd(g.cost)),
        // how it was served, which the cost counts (a tier, fast mode, US-only inference): shown where the upstream said
        g.service_tier ? kv('service tier', g.service_tier) : null, g.speed ? kv('speed', g.speed) : null, g.inference_geo ? kv('inference geo', g.inference_geo) : null,
        kv('finish reason', g.finish_reason ?? '–'), g.status ? kv('status', g.status) : null, g.batch_id ? kv('batch', g.batch_id) : null,
        kv('HTTP status', g.http_status ?? '–'), kv('error', g.error ?? '–')))
    detail.hidden = false
  }

  /** A rare filter's pages may stop at the server's scan budget (`partial`): read on, a few times. */
  const PAGE = 50
  const MAX_READS = 20

  async function load(append: boolean) {
    const mine = ++seq
    try {
      let after = append ? (last ?? undefined) : undefined
      let added = 0
      let page: List<Generation>
      for (let reads = 1; ; reads++) {
        page = await api.get<List<Generation>>('/api/v1/generations', { ...filter, limit: PAGE - added, after })
        if (mine !== seq) return
        if (!append && reads === 1) rows.replaceChildren()
        for (const g of page.data) rows.append(row(g))
        added += page.data.length
        after = page.last_id ?? after
        if (!(page.partial && page.has_more && added < PAGE && reads < MAX_READS)) break
        note.textContent = `Searching older records… (${added} found so far)`
      }
      last = page.last_id ?? last
      more.hidden = !page.has_more
      note.textContent = rows.childElementCount === 0
        ? page.has_more ? 'No match among the newest records searched; Load more searches older ones.' : 'No records match.'
        : `${rows.childElementCount} record(s) shown${page.has_more ? ', more below' : ''}.`
    } catch (e) {
      if (mine === seq) note.textContent = (e as Error).message
    }
  }

  function row(g: Generation) {
    return h('tr', { class: 'row' + (g.error ? ' failed' : ''), tabindex: 0, onclick: () => open(g), onkeydown: (e: KeyboardEvent) => e.key === 'Enter' && open(g) },
      h('td', null, time(g.created_at)), h('td', { class: 'name', title: g.model }, g.model), h('td', null, g.endpoint), h('td', { class: 'mono' }, g.api_key_id),
      h('td', null, g.error ? 'error' : 'ok'), h('td', { class: 'n' }, num(g.usage.total_tokens)), h('td', { class: 'n' }, g.unpriced ? 'unpriced' : usd(g.cost)), h('td', { class: 'n' }, ms(g.latency_ms)))
  }

  void load(false)
  return () => {
    ++seq
    clearTimeout(typing)
  }
}

/** `show(n)` for a count the record has (present and above 0), else nothing. */
const some = <T>(n: number | undefined, show: (n: number) => T): T | null => (n ? show(n) : null)

/** The image tool's tokens on one line: its model, input (image and cached parts), output (image part). */
function imageTool(t: NonNullable<Generation['usage']['image_tool']>): string {
  const input = `${num(t.input_tokens)} in (${num(t.image_input_tokens)} image, ${num(t.cached_tokens)} cached)`
  const output = `${num(t.output_tokens)} out (${num(t.image_output_tokens)} image)`
  return `${t.model ? isolated(t.model) + ': ' : ''}${input}, ${output}`
}
