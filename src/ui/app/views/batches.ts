// Batches: each with a live progress bar (completed and failed of total, items per second,
// time left), polled every second while any is still running; exports are fetched with the
// token in the header and saved from a blob. The admin may cancel; a key only looks.
import * as api from '../api.ts'
import { h, replace, setWidth } from '../dom.ts'
import { duration, num, pct, time } from '../fmt.ts'
import type { Batch, List, Session } from '../types.ts'

const EXPORTS: [label: string, query: string, ext: string][] = [
  ['JSONL', 'format=ndjson', 'jsonl'],
  ['JSONL.gz', 'format=ndjson&gzip=true', 'jsonl.gz'],
  ['ZIP', 'format=zip', 'zip'],
]
/** Poll while a batch runs; slower when none does, so that a new one still shows up. */
const POLL_MS = 1000
const IDLE_POLL_MS = 3000

export function batchesView(root: HTMLElement, session: Session): () => void {
  const list = h('div', { class: 'batches' })
  const msg = h('p', { class: 'muted' })
  replace(root, h('h2', null, 'Batches'), msg, list)
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false

  const fail = (e: unknown) => (msg.textContent = (e as Error).message)

  function card(b: Batch) {
    const p = b.progress
    const fill = h('div', { class: 'fill' })
    const failedFill = h('div', { class: 'fill failed' })
    setWidth(fill, p.total ? p.completed / p.total : p.fraction)
    setWidth(failedFill, p.total ? p.failed / p.total : 0)
    const rate = p.items_per_second === null ? '' : ` · ${p.items_per_second.toFixed(1)} items/s`
    const eta = p.ended ? '' : p.eta_seconds === null ? ' · time left unknown' : ` · about ${duration(p.eta_seconds)} left`
    const open = !['completed', 'cancelling', 'cancelled', 'expired', 'failed'].includes(b.status)
    return h('section', { class: 'batch', 'data-batch': b.id, 'data-status': b.status, 'data-percent': Math.round(p.fraction * 100) },
      h('header', null, h('b', { class: 'mono' }, b.id), h('span', { class: `badge ${b.status}` }, b.status), h('span', { class: 'muted' }, `${b.endpoint} · created ${time(b.created_at)}` + (session.role === 'admin' ? ` · key ${b.api_key_id}` : ''))),
      h('div', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': Math.round(p.fraction * 100) }, fill, failedFill),
      h('p', { class: 'progress-text' }, `${num(p.done)} of ${num(p.total)} (${pct(p.fraction)}): ${num(p.completed)} completed, ${num(p.failed)} failed${rate}${eta}`),
      h('div', { class: 'actions' },
        EXPORTS.map(([label, q, ext]) => h('button', { class: 'export', onclick: () => void api.download(`/api/v1/dashboard/batches/${b.id}/export?${q}`, `${b.id}_results.${ext}`).catch(fail) }, `Export ${label}`)),
        session.role === 'admin' && open ? h('button', { class: 'danger', onclick: () => void api.send('POST', `/admin/v1/batches/${b.id}/cancel`).then(() => load(), fail) }, 'Cancel') : null))
  }

  async function load() {
    clearTimeout(timer)
    try {
      const page = await api.get<List<Batch>>('/api/v1/dashboard/batches', { limit: 20 })
      if (stopped) return
      replace(list, page.data.map(card))
      msg.textContent = page.data.length === 0 ? 'No batches yet.' : ''
      timer = setTimeout(() => void load(), page.data.some((b) => !b.progress.ended) ? POLL_MS : IDLE_POLL_MS)
    } catch (e) {
      fail(e)
      if (!stopped) timer = setTimeout(() => void load(), POLL_MS * 5)
    }
  }

  void load()
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}
