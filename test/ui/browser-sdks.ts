// The official SDKs as a page loads them: built for the browser by the cross-origin test and
// served from an origin of its own, where they call the gateway as a web app would.
import OpenAI from 'openai'
import Anthropic from '@anthropic-ai/sdk'

Object.assign(globalThis, { OpenAI, Anthropic })
