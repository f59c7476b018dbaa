// The dashboard page: sign-in, then one view at a time chosen by the URL hash. The admin token
// sees every account and manages keys; an API key sees its own account, read-only.
import './style.css'
import * as api from './api.ts'
import { h, replace, setWidth } from './dom.ts'
import { usd } from './fmt.ts'
import type { Session } from './types.ts'
import { batchesView } from './views/batches.ts'
import { generationsView } from './views/generations.ts'
import { keysView } from './views/keys.ts'
import { providersView } from './views/providers.ts'
import { FIRST_USAGE, usageQuery, usageView } from './views/usage.ts'

type View = (root: HTMLElement, s: Session) => () => void
const VIEWS: { id: string; label: string; view: View; adminOnly?: boolean }[] = [
  { id: 'usage', label: 'Usage', view: usageView },
  { id: 'generations', label: 'Generations', view: generationsView },
  { id: 'keys', label: 'Keys', view: keysView, adminOnly: true },
  { id: 'batches', label: 'Batches', view: batchesView },
  { id: 'providers', label: 'Providers', view: providersView },
]

const app = document.getElementById('app')!
let leave: (() => void) | undefined

function signOut() {
  window.onhashchange = null
  api.setToken(null)
  history.replaceState(null, '', location.pathname)
  signInForm()
}

function signInForm(message = '') {
  window.onhashchange = null
  leave?.()
  leave = undefined
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', placeholder: 'admin token or sk-sy-… API key', size: 48, required: true })
  const remember = h('input', { type: 'checkbox', name: 'remember', checked: true })
  const form = h('form', { class: 'signin', onsubmit: (e: Event) => {
      e.preventDefault()
      void start(input.value.trim(), remember.checked)
    } },
    h('h1', null, 'Switchyard'),
    h('p', null, 'Sign in with the admin token (SWITCHYARD_ADMIN_TOKEN) to see every account, or with an API key to see its own.'),
    input,
    h('label', null, remember, ' keep me signed in in this tab (sessionStorage)'),
    h('button', { type: 'submit' }, 'Sign in'),
    message ? h('p', { class: 'error', role: 'alert' }, message) : null)
  replace(app, form)
  input.focus()
}

async function start(token: string, remember: boolean) {
  if (!api.isToken(token)) api.setToken(token, remember)
  try {
    const session = await api.get<Session>('/api/v1/dashboard/session')
    shell(session)
  } catch (e) {
    api.setToken(null)
    signInForm(e instanceof api.ApiError && e.status === 401 ? 'That token was not accepted.' : (e as Error).message)
  }
}

function who(s: Session) {
  if (s.role === 'admin') return h('span', { class: 'who' }, 'admin · all accounts')
  const k = s.key!
  const fill = h('div', { class: 'fill' })
  setWidth(fill, k.credits ? k.spent / k.credits : 0)
  // name and account in <bdi>: an override inside them must not turn the figures after them around
  return h('span', { class: 'who' }, h('bdi', null, k.name), ` (${k.id}) · account `, h('bdi', null, k.account), ' · read-only · ',
    h('span', { class: 'bar small inline' }, fill), ` ${usd(k.spent)} of ${k.credits === null ? 'unlimited' : usd(k.credits)}`)
}

function shell(session: Session) {
  const views = VIEWS.filter((v) => !v.adminOnly || session.role === 'admin')
  const main = h('main')
  const nav = h('nav', null, views.map((v) => h('a', { href: `#${v.id}`, 'data-view': v.id }, v.label)))
  replace(app,
    h('header', { class: 'top' }, h('b', null, 'Switchyard'), nav, who(session),
      h('button', { class: 'signout', onclick: signOut }, 'Sign out')),
    main)
  const show = () => {
    const id = location.hash.slice(1)
    const v = views.find((x) => x.id === id) ?? views[0]!
    for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.view === v.id)
    leave?.()
    leave = v.view(main, session)
  }
  window.onhashchange = show
  show()
}

// a token refused mid-session (its key disabled, its credits at zero): back to the sign-in
api.onUnauthorized((message) => {
  window.onhashchange = null
  api.setToken(null)
  signInForm(`Signed out: ${message}`)
})

const remembered = api.rememberedToken()
if (remembered) {
  api.setToken(remembered, true)
  // the first view's data is fetched beside the session check, not after it
  if (location.hash === '' || location.hash === '#usage') api.prefetch('/api/v1/usage', usageQuery(FIRST_USAGE))
  void start(remembered, true)
} else signInForm()
