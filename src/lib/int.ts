// A schema's integer that must be a number. Elysia's `t.Integer` also passes any string of
// digits, and its bounds do not apply to that string: a config's `key_rpm: "0"` or an admin's
// `{"rpm": "0"}` went through as the string "0".
import { Type } from '@sinclair/typebox'

export const Int = (options?: Parameters<typeof Type.Integer>[0]) => Type.Integer(options)
