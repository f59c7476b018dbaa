// The messages-style codec's public functions in one place, for the pipeline and tests.
export { normalizeMessagesBody, validateMessages } from './validate.ts'
export { messagesToIR } from './params.ts'
export { encodeMessagesResponse, messagesId, messagesStopReason, messagesStopSequence, messagesUsage } from './encode.ts'
export { createMessagesStreamEncoder, type MessagesStreamState } from './stream.ts'
export { messagesErrorFrame } from './errors.ts'
export { messagesPromptText } from './prompt.ts'
