/** A turn of the event loop: whatever is waiting (other requests, /health, messages) runs first. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve))
