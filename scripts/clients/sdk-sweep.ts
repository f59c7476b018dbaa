// Every method the pinned official SDKs (`openai` 7, `@anthropic-ai/sdk` 1, from the project's
// node_modules) offer for a resource the gateway serves, called as a user calls it, on the
// built-in mock with a GPT and a Claude model (`mock-gpt`, `mock-claude`): chat completions,
// responses (input items, input token counting, retrieve, cancel, delete, compact),
// conversations and their items, files, batches, models; messages (count_tokens, batches,
// the beta namespace), Anthropic files and models; the gateway's own generation records and
// usage. Helpers too: `.stream()`, `.parse()`, `runTools`, `toFile`, auto-pagination with
// `for await`, `withResponse()` (x-request-id) and `.asResponse()`.
//
// Every reply and stream event (and the items, blocks and lists inside them) is checked to carry
// each field the SDKs' types declare without `?`, read from their .d.ts: a typed client reads
// those as present. Not checked so: the responses reply's `required_action` (the
// specification's own extra) and the beta usage's `fallback_credit` (Anthropic leaves it out
// without a fallback credit token).
//
// Methods the gateway does not serve are checked to be a clear JSON 4xx (never a 500 or an
// HTML page): stored chat completions (retrieve, update, list, delete, messages.list), model
// deletion, `responses.compact` (context_management on a request instead), a retrieve's
// `stream: true` and `responses.cancel` (every response is answered in the foreground, so there
// is nothing queued to cancel or replay), and the resources outside the specification
// (embeddings, images, audio, vector stores, uploads, containers, fine-tuning, Anthropic's
// skills, agents, sessions).
//
// By the specification, not the SDKs' defaults: a Claude model on chat takes `max_tokens`
// (`max_completion_tokens` and `response_format` are §8's 400 for it); a responses reply that
// called tools says `status: "requires_action"` (§4.5), in which the openai SDK's `.parse()`
// leaves `parsed_arguments` null (it parses only a `completed` reply's calls; the config's
// `responses.tool_calls_status: completed` gives OpenAI's); errors are `{ error: <message> }`.
//
// Not run in CI; run it by hand: `bun scripts/clients/sdk-sweep.ts`. The gateway runs as
// `bun src/main.ts serve` on a free port, with a temp data dir, a known key and no upstream.
// PASS/FAIL a line; the exit status is 1 when any failed. The parts, in the order they run,
// are in sweep/ (the checks they use in sweep/checks.ts).
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { checks, startGateway } from './harness.ts'
import { filesAndModels, messageBatches, messages } from './sweep/anthropic.ts'
import { recordsAndUsage, unserved } from './sweep/gateway.ts'
import { chatCompletions, responses } from './sweep/openai.ts'
import { conversations, filesBatchesModels } from './sweep/openai-resources.ts'
import { parameters } from './sweep/parameters.ts'
import { sdkHelpers } from './sweep/sdk-helpers.ts'
import { shapes } from './sweep/shapes.ts'
import type { Sweep } from './sweep/context.ts'

const key = `sk-sy-sdk-sweep-${crypto.randomUUID().replaceAll('-', '')}`
const gw = await startGateway(key, 'sdk-sweep')
const { check, done } = checks(gw)
const sweep: Sweep = {
  oa: new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 }),
  an: new Anthropic({ apiKey: key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 }),
  key,
  url: gw.url,
  check,
}

// one after another: later parts list what earlier ones made (files, batches, conversations)
for (const part of [chatCompletions, responses, conversations, filesBatchesModels, messages, messageBatches, filesAndModels, parameters, shapes, sdkHelpers, unserved, recordsAndUsage]) await part(sweep)

done()
