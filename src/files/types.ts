// What the files capability knows about a stored file, independent of either wire family.

export interface FileRecord {
  id: string
  /** The key that uploaded it; the only key that may see it. */
  apiKeyId: string
  /** As given at upload; metadata only, never part of a path. */
  filename: string
  purpose: string
  bytes: number
  mimeType: string
  /** Epoch ms. */
  createdAt: number
  /** Epoch ms; null = never. */
  expiresAt: number | null
  /** Where the blob store keeps the bytes. */
  blobKey: string
  sha256: string | null
}

/** Which wire family a route speaks: OpenAI's file objects or Anthropic's file metadata. */
export type Family = 'openai' | 'anthropic'

export interface ListQuery {
  limit: number
  /** Page of files older than this one (newest-first order). */
  after?: string
  /** Page of files newer than this one, still returned newest first. */
  before?: string
  purpose?: string
  order: 'desc' | 'asc'
}

export interface ListPage {
  data: FileRecord[]
  hasMore: boolean
}

export type DeleteReason = 'deleted' | 'expired'
