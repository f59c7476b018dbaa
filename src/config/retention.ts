// How long generation records are kept, bounds and default (`records.retention_days`, read in
// records.ts). A module of its own without the config schema: the recorder reads these in a
// batch worker, which need not load the schema's modules.

/** Records must be kept at least this long: a shorter retention is refused at start. */
export const MIN_RETENTION_DAYS = 7
export const DEFAULT_RETENTION_DAYS = 90
