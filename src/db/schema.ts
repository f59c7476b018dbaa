// The metadata schema on SQLite (declared once for both dialects in tables.ts). drizzle-kit
// generates db/migrations from this file.
import { declareTables, sqliteKit } from './tables.ts'

export const { apiKeys, files, generations, usageHourly, storedResponses, storedItems, containerGrants, conversations, conversationItems, batches, batchItems, batchIngests, creditReservations, responseCache, pruneMarks } = declareTables(sqliteKit)
