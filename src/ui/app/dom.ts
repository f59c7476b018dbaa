// A few DOM helpers: elements are built with createElement and text nodes, never from HTML
// strings, so nothing a record contains can become markup, and no inline style or script ever
// exists for the Content-Security-Policy to refuse.
export type Child = Node | string | number | null | undefined | false | Child[]
export type Props = Record<string, unknown>

const SVG_NS = 'http://www.w3.org/2000/svg'

function apply(el: Element, props?: Props | null) {
  if (!props) return
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v as EventListener)
    // form state is a property, not an attribute, once the user has touched the field
    else if (k === 'value' || k === 'checked') (el as unknown as Record<string, unknown>)[k] = v
    else el.setAttribute(k, v === true ? '' : String(v))
  }
}

function append(el: Element, children: Child[]) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    if (Array.isArray(c)) append(el, c)
    else el.append(c instanceof Node ? c : String(c))
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  apply(el, props)
  append(el, children)
  return el
}

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag)
  apply(el, props)
  append(el, children)
  return el
}

export function replace(el: Element, ...children: Child[]) {
  el.replaceChildren()
  append(el, children)
}

/** A bar's fill, set through the CSSOM (allowed by the CSP, unlike a style attribute). */
export function setWidth(el: HTMLElement, fraction: number) {
  el.style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`
}
