// A config that cannot be served: fatal at start (and in `switchyard config`), its message
// naming the field.
export class ConfigError extends Error {}

/** A start that cannot go on for something outside the config (a database that does not answer): fatal, one line naming it. */
export class StartError extends Error {}
