// A test-only hook: a start that fails once the gateway listens, after the batch service and the
// rest have started, as a database that goes away at that moment would fail it. Only with
// SWITCHYARD_TEST_FAIL_START_AFTER_LISTEN set in the process's environment, read at each start
// (in-process tests set it around one start; nothing a request sends reaches it).
export function failStartIfAsked(): void {
  if (process.env.SWITCHYARD_TEST_FAIL_START_AFTER_LISTEN) throw new Error('start failed on purpose (SWITCHYARD_TEST_FAIL_START_AFTER_LISTEN)')
}

/**
 * A test-only hook: the PostgreSQL ledger's `own` refused at a start, after the database was
 * opened and before the services hold it, as a lock session that cannot be had would refuse it.
 * Only with SWITCHYARD_TEST_FAIL_LEDGER_OWN set, read at each start (in-process tests set it
 * around one start).
 */
export function failOwnIfAsked(): void {
  if (process.env.SWITCHYARD_TEST_FAIL_LEDGER_OWN) throw new Error('credit holds owner refused on purpose (SWITCHYARD_TEST_FAIL_LEDGER_OWN)')
}
