// The container an Anthropic reply says its code execution ran in (`container: { id,
// expires_at }`: the JSON reply's, message_start's message's, message_delta's delta's), for the
// pipeline to record as given to the key that asked (containers/grants.ts).
import type { ContainerGiven } from '../../routing/contract.ts'

/** Tells `given` of the container `v` names, if it names one (null: none was used). */
export function tellContainer(v: unknown, given: ContainerGiven | undefined): void {
  if (!given || typeof v !== 'object' || v === null) return
  const { id, expires_at } = v as { id?: unknown; expires_at?: unknown }
  if (typeof id !== 'string' || id === '') return
  const at = typeof expires_at === 'string' ? Date.parse(expires_at) : NaN
  given(id, Number.isNaN(at) ? undefined : at)
}
