// Anthropic's tools that run at the client, with a schema Claude knows by its `type` alone
// (`bash_20250124`, `text_editor_20250728` …): for a model of another family each is the
// function tool it stands for, under the name the request gave it, so the model can call it
// and the client runs the call as it would Claude's. One row a tool; the version suffix is
// not read (every version takes these inputs; a command a version lacks is the client's to refuse).
import type { Tool } from '../../ir/types.ts'

const str = (description: string) => ({ type: 'string', description })

const CLIENT_TOOLS: Record<string, Omit<Tool, 'name'>> = {
  bash: {
    description: 'Run a command in a persistent bash shell; restart: true restarts the shell.',
    parameters: {
      type: 'object',
      properties: { command: str('The bash command to run.'), restart: { type: 'boolean', description: 'Restart the shell.' } },
    },
  },
  text_editor: {
    description:
      'View, create and edit text files. view: a file (with line numbers) or a directory; create: a new file with file_text; ' +
      'str_replace: replace old_str, which must occur exactly once, with new_str; insert: new_str after line insert_line (0: the start).',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'], description: 'The command to run.' },
        path: str('The path of the file or directory.'),
        file_text: str('create: the content of the new file.'),
        old_str: str('str_replace: the text to replace, exactly as in the file.'),
        new_str: str('str_replace: the new text; insert: the text to insert.'),
        insert_line: { type: 'integer', description: 'insert: the line after which to insert (0: the start of the file).' },
        view_range: { type: 'array', items: { type: 'integer' }, description: 'view: the first and last line to show (-1: to the end).' },
      },
      required: ['command', 'path'],
    },
  },
}

/** The function tool an Anthropic client tool stands for, when it is one of those above. */
export function clientTool(t: { type: string; name: string }): Tool | undefined {
  const kind = /^([a-z_]+?)_\d{8}$/.exec(t.type)?.[1]
  const row = kind === undefined ? undefined : CLIENT_TOOLS[kind]
  return row && { name: t.name, ...structuredClone(row) }
}
