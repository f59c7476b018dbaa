// A config that cannot be served: fatal at start (and in `switchyard config`), its message
// naming the field.
export class ConfigError extends Error {}
