// Ids of the responses the gateway makes and of their output items. An item's id names the
// response it is in (its 32 hex digits, then the item's place), so an `item_reference` a client
// sends later (the AI SDK's, with `store`) is found by reading that one stored response.

const hex = (n: number) => crypto.randomUUID().replaceAll('-', '').slice(0, n)
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
