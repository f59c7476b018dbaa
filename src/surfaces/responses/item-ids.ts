// Ids of the responses the gateway makes and of their output items. An item's id names the
// response it is in (its 32 hex digits, then the item's place), so an `item_reference` a client
// sends later (the AI SDK's, with `store`) is found by reading that one stored response.

import { badRequest, type HttpError } from '../../http/errors.ts'

/** `n` random hex digits (a UUID's 32 at a time). */
export function hex(n: number): string {
  let out = ''
  while (out.length < n) out += crypto.randomUUID().replaceAll('-', '')
  return out.slice(0, n)
}
export const newId = (prefix: string) => `${prefix}_${hex(32)}`

const GATEWAY_RESPONSE = /^resp_([0-9a-f]{32})$/
const GATEWAY_ITEM = /^[a-z]+_([0-9a-f]{32})[0-9a-f]{4}$/

/** An output item's id in the response `responseId` at `index`; a response id of another shape gives a random one. */
export function itemId(prefix: string, responseId: string, index: number): string {
  const m = GATEWAY_RESPONSE.exec(responseId)
  return m ? `${prefix}_${m[1]}${index.toString(16).padStart(4, '0')}` : newId(prefix)
}

/** The response an item id names (itemId), or undefined for an id the gateway did not make so. */
export const responseOfItem = (id: string): string | undefined => {
  const m = GATEWAY_ITEM.exec(id)
  return m ? `resp_${m[1]}` : undefined
}

/** The 400 for an `item_reference` in the gateway's form that names no item it stored for this key. */
export const unknownGatewayItem = (where: string, id: string): HttpError =>
  badRequest(`${where}: item_reference "${id.slice(0, 80)}" names no item this gateway stored for this key (a reply stored with store: false, deleted, expired, or another key's); send the item itself`)
