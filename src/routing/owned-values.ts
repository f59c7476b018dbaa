// Value sets the provider owns and grows: display modes, effort levels, service tiers,
// verbosity, cache retention. The gateway must not freeze them. On a model of the surface's
// own family the value goes upstream as it is (the upstream is the authority, and its 400
// comes back unchanged; the mock ignores what it does not model). Only where the gateway
// translates the request to the other family does it need to know the value, and there an
// unknown one is a 400 naming the field and the value. These are the values a translation
// knows; the surfaces' parameter tables name them per row (`owned`), and schemas take any
// string for those fields.

export const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']
export const CLAUDE_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max']
// `fast`: priority's new name (config/service-tiers.ts)
export const OPENAI_TIERS = ['auto', 'default', 'flex', 'scale', 'priority', 'fast']
export const VERBOSITY = ['low', 'medium', 'high']
// `in_memory`: the API's spelling (the openai SDK's types, the Agents SDK); `in-memory`: its guide's
export const CACHE_RETENTION = ['in_memory', 'in-memory', '24h']
export const THINKING_DISPLAY = ['summarized', 'omitted']
