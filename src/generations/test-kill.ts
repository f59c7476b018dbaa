// A test-only hook: the process killed outright (SIGKILL) right after the database committed
// the records of the spool and before the spool was removed, the moment a kill there would
// leave records both stored and spooled. Only with SWITCHYARD_TEST_KILL_AFTER_SPOOL_COMMIT set
// (the tests set it; nothing a request sends reaches it).
const ASKED = !!process.env.SWITCHYARD_TEST_KILL_AFTER_SPOOL_COMMIT

export function killIfAsked(): void {
  if (ASKED) process.kill(process.pid, 'SIGKILL')
}
