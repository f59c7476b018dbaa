// The files service of a running gateway: bytes on the local disk under the data dir, or in
// S3-compatible storage (`blobs.s3`).
// Call `start(onClose)` on it to run the start-up sweep and the pruning of expired files.
import { join } from 'node:path'
import type { Config } from '../config/load.ts'
import type { Storage } from '../db/client.ts'
import type { Logger } from '../http/log.ts'
import { DiskBlobStore } from './disk-blob-store.ts'
import { S3BlobStore } from './s3-blob-store.ts'
import { FilesRepo } from './repo.ts'
import { FilesService } from './service.ts'

export function createFilesService(deps: { config: Config; storage: Storage; log: Logger }): FilesService {
  return new FilesService({
    repo: new FilesRepo(deps.storage),
    // S3 when configured (several gateways share it), the data dir's disk otherwise
    blobs: deps.config.s3 ? new S3BlobStore(deps.config.s3) : new DiskBlobStore(join(deps.config.dataDir, 'blobs')),
    log: deps.log,
  })
}
