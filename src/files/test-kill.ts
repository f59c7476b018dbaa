// A test-only hook: the process killed outright (SIGKILL) right after the record of an upload
// named SWITCHYARD_TEST_KILL_AFTER_FILE_RECORD was stored, before the client has its answer.
// Only with that variable set (the tests set it; nothing a request sends reaches it otherwise).
const NAME = process.env.SWITCHYARD_TEST_KILL_AFTER_FILE_RECORD

export function killAfterRecordIfAsked(filename: string): void {
  if (NAME && filename === NAME) process.kill(process.pid, 'SIGKILL')
}
