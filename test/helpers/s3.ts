// S3-compatible storage for the scale-out tests. SWITCHYARD_TEST_S3_ENDPOINT names
// a running server (CI starts s3rver on Node); suites that need it skip, saying so, when it is
// unset. Each test gets a bucket of its own on it; the credentials are s3rver's fixed
// S3RVER/S3RVER unless the env names others.
import { S3Client } from 'bun'

export const TEST_S3_ENDPOINT = process.env.SWITCHYARD_TEST_S3_ENDPOINT || undefined

export function s3SkipReason(): string | undefined {
  if (TEST_S3_ENDPOINT) return undefined
  return 'SWITCHYARD_TEST_S3_ENDPOINT is unset: the S3 blob tests are skipped (.ci/run starts s3rver and sets it)'
}

export const TEST_S3_KEY = process.env.SWITCHYARD_TEST_S3_ACCESS_KEY_ID || 'S3RVER'
export const TEST_S3_SECRET = process.env.SWITCHYARD_TEST_S3_SECRET_ACCESS_KEY || 'S3RVER'

/** A fresh bucket; the env a gateway needs to use it. */
export async function freshBucket(): Promise<{ bucket: string; env: Record<string, string>; client: S3Client }> {
  const bucket = `sytest-${crypto.randomUUID().slice(0, 8)}`
  // CreateBucket: a PUT on the bucket's path (s3rver takes it unsigned)
  const res = await fetch(`${TEST_S3_ENDPOINT!.replace(/\/+$/, '')}/${bucket}`, { method: 'PUT' })
  if (!res.ok) throw new Error(`could not create bucket ${bucket}: HTTP ${res.status} ${await res.text()}`)
  const env = { S3_BUCKET: bucket, S3_ENDPOINT: TEST_S3_ENDPOINT!, S3_REGION: 'us-east-1', S3_ACCESS_KEY_ID: TEST_S3_KEY, S3_SECRET_ACCESS_KEY: TEST_S3_SECRET }
  const client = new S3Client({ bucket, endpoint: TEST_S3_ENDPOINT, region: 'us-east-1', accessKeyId: TEST_S3_KEY, secretAccessKey: TEST_S3_SECRET, virtualHostedStyle: false })
  return { bucket, env, client }
}
