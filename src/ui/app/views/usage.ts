// Usage: requests, tokens or cost per hour or day, stacked by model; totals, the unpriced
// count, what else the costs count where the window has any, and the top models table. Everything comes from one GET /api/v1/usage with
// `breakdown=model` (a series per model beside the total).
import * as api from '../api.ts'
import { stackedBars, type Stack } from '../chart.ts'
import { h, replace } from '../dom.ts'
import { num, usd } from '../fmt.ts'
import type { Session, UsageExtras, UsageReport } from '../types.ts'

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f']
const OTHER = '#bab0ac'
const METRICS = {
  requests: { label: 'Requests', of: (p: UsageReport['series'][number]) => p.requests, fmt: num },
  tokens: { label: 'Tokens', of: (p: UsageReport['series'][number]) => p.input_tokens + p.output_tokens, fmt: num },
  cost: { label: 'Cost', of: (p: UsageReport['series'][number]) => p.cost, fmt: usd },
} as const
type Metric = keyof typeof METRICS

/**
 * What else the costs count, each as a card of the totals and a column of the top models, in
 * plain words: shown only when the window has some (most have none, and look as without them).
 */
const EXTRAS: [field: keyof UsageExtras, card: string, column: string][] = [
  ['input_cache_write_1h_tokens', 'input tokens cached for 1 hour (part of the cache writes)', 'of which cached for 1 hour'],
  ['input_audio_tokens', 'audio input tokens (part of the input)', 'of which audio input'],
  ['output_audio_tokens', 'audio output tokens (part of the output)', 'of which audio output'],
  ['web_search_requests', 'web searches', 'web searches'],
  ['file_search_requests', 'file searches', 'file searches'],
  ['image_tool_tokens', 'image tool tokens (its own model, in and out)', 'image tool tokens'],
]

/** The report the view asks for first (main.ts starts it at page load). */
export const FIRST_USAGE = { timeframe: '24h', granularity: '', account: '' }

export function usageQuery(st: typeof FIRST_USAGE) {
  return { timeframe: st.timeframe, granularity: st.granularity || undefined, account: st.account || undefined, breakdown: 'model' }
}

export function usageView(root: HTMLElement, session: Session): () => void {
  const state = { ...FIRST_USAGE, metric: 'requests' as Metric }
  const body = h('div', { class: 'usage-body' }, h('p', { class: 'muted' }, 'Loading…'))
  const select = (name: keyof typeof state, options: [string, string][]) =>
    h('label', null, name, ' ',
      h('select', { name, onchange: (e: Event) => ((state[name] = (e.target as HTMLSelectElement).value as never), void load()) },
        options.map(([v, l]) => h('option', { value: v, selected: state[name] === v }, l))))
  replace(root,
    h('h2', null, 'Usage'),
    h('div', { class: 'controls' },
      select('timeframe', [['24h', 'last 24 hours'], ['7d', 'last 7 days'], ['30d', 'last 30 days']]),
      select('granularity', [['', 'auto'], ['hour', 'hour'], ['day', 'day']]),
      select('metric', [['requests', 'requests'], ['tokens', 'tokens'], ['cost', 'cost']]),
      session.role === 'admin' ? select('account', [['', 'all accounts'], ...session.accounts.map((a): [string, string] => [a, a])]) : null),
    body)

  let seq = 0
  async function load() {
    const mine = ++seq
    try {
      const report = await api.get<UsageReport>('/api/v1/usage', usageQuery(state))
      if (mine === seq) draw(report)
    } catch (e) {
      if (mine === seq) replace(body, h('p', { class: 'error' }, (e as Error).message))
    }
  }

  function draw(report: UsageReport) {
    const m = METRICS[state.metric]
    const buckets = report.series.map((p) => p.timestamp)
    const top = (report.series_by_model ?? []).slice(0, PALETTE.length)
    const stacks: Stack[] = top.map(({ model, series }, i) => ({ label: model, color: PALETTE[i]!, values: series.map(m.of) }))
    // whatever the top models leave of each bucket (more models than colours)
    const rest = report.series.map((p, i) => Math.max(0, m.of(p) - stacks.reduce((a, s) => a + (s.values[i] ?? 0), 0)))
    if (rest.some((v) => v > 1e-9)) stacks.push({ label: 'other models', color: OTHER, values: rest })
    // hours of one day by the time; of several days, with the date
    const tick = (iso: string) => (report.granularity === 'day' ? iso.slice(5, 10) : buckets.length > 48 ? `${iso.slice(5, 10)} ${iso.slice(11, 13)}h` : iso.slice(11, 16))
    const t = report.totals
    const extras = EXTRAS.filter(([f]) => t[f] > 0)
    replace(body,
      h('div', { class: 'cards' },
        h('div', { class: 'card' }, h('b', { 'data-total': 'requests' }, num(t.total_requests)), h('span', null, 'requests')),
        h('div', { class: 'card' }, h('b', { 'data-total': 'tokens' }, num(t.total_tokens)), h('span', null, `tokens (${num(t.input_tokens)} in, ${num(t.output_tokens)} out)`)),
        h('div', { class: 'card' }, h('b', { 'data-total': 'cost' }, usd(t.total_cost)), h('span', null, 'cost')),
        h('div', { class: 'card' + (t.unpriced_requests ? ' warn' : '') }, h('b', { 'data-total': 'unpriced' }, num(t.unpriced_requests)), h('span', null, 'unpriced requests (no known price; not in the cost)')),
        extras.map(([f, label]) => h('div', { class: 'card' }, h('b', { 'data-total': f }, num(t[f])), h('span', null, label)))),
      h('figure', null,
        h('figcaption', null, `${m.label} per ${report.granularity} (UTC), stacked by model`),
        stackedBars(buckets, stacks, m.fmt, tick),
        h('ul', { class: 'legend' }, stacks.map((s) => h('li', null, h('i', { class: 'swatch', 'data-color': s.color }), s.label)))),
      h('h3', null, 'Top models'),
      report.top_models.length === 0
        ? h('p', { class: 'muted' }, 'No requests in this window.')
        : h('table', { class: 'top-models' },
            h('thead', null, h('tr', null, h('th', null, 'model'), ['requests', 'tokens', 'of which cached input', 'of which reasoning', ...extras.map(([, , c]) => c), 'cost', 'unpriced'].map((c) => h('th', { class: 'n' }, c)))),
            h('tbody', null, report.top_models.map((r) =>
              h('tr', null, h('td', { class: 'name', title: r.model }, r.model), h('td', { class: 'n' }, num(r.requests)), h('td', { class: 'n' }, num(r.tokens)), h('td', { class: 'n' }, num(r.input_cached_tokens)),
                h('td', { class: 'n' }, num(r.reasoning_tokens)), extras.map(([f]) => h('td', { class: 'n', 'data-extra': f }, num(r[f]))), h('td', { class: 'n' }, usd(r.cost)), h('td', { class: 'n' }, num(r.unpriced_requests)))))))
    // swatch colours through the CSSOM (a style attribute would be refused by the CSP)
    for (const i of body.querySelectorAll<HTMLElement>('.swatch')) i.style.background = i.dataset.color ?? OTHER
    document.body.dataset.usageRenderedMs = String(Math.round(performance.now()))
  }

  void load()
  return () => void ++seq
}
