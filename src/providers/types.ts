// Provider modules take the adapter contract from its neutral home (routing/contract.ts).
export type { CallContext, Passthrough, ProviderAdapter, ProviderConfig, ProviderKind, TapOptions, TapState, Wire, WireTap } from '../routing/contract.ts'
export { UpstreamError } from '../ir/errors.ts'
