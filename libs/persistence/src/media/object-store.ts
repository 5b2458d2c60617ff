import type { S3Client } from '@aws-sdk/client-s3';
import { ConfigError, EnvReader } from '@gw/platform';

/**
 * Where media bytes live when they are not in Postgres: an S3-compatible bucket (AWS S3, MinIO, R2…).
 * Postgres keeps every file's row (instance, type, name, expiry) either way, so lookups, tenant checks
 * and expiry stay one query; only the bytes move.
 */
export interface ObjectStore {
  /** `s3://bucket/prefix` (for logs). */
  readonly description: string;
  /** The object key of a file. */
  keyOf(instanceId: string, fileId: string): string;
  put(key: string, data: Buffer, mimetype: string): Promise<void>;
  /** The bytes, or null when the object is gone. */
  get(key: string): Promise<Buffer | null>;
  /** Deletes these objects (missing ones are no error). */
  delete(keys: string[]): Promise<void>;
  /** A signed GET link valid for `expiresInSeconds` (at most 7 days), answering with these headers. */
  signedUrl(key: string, options: { expiresInSeconds: number; contentType: string; contentDisposition: string }): Promise<string>;
}

export interface S3StoreConfig {
  bucket: string;
  region: string;
  /** Omitted for AWS itself. */
  endpoint?: string;
  /** Where clients reach the bucket, when it differs from `endpoint` (signed links are made for it). */
  publicEndpoint?: string;
  forcePathStyle: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Prepended to every key (`media/` → `media/<instance>/<file>`). */
  prefix: string;
}

/** The longest a SigV4 presigned URL may be valid. */
export const MAX_SIGNED_SECONDS = 7 * 24 * 3600;

/**
 * S3_BUCKET turns the S3 media store on (media then goes to the bucket; without it, to Postgres):
 * S3_REGION (`us-east-1`), S3_ENDPOINT (for MinIO, R2…; none for AWS), S3_PUBLIC_ENDPOINT (the
 * endpoint in signed links, when clients reach the bucket elsewhere), S3_FORCE_PATH_STYLE (default
 * true when an endpoint is given), S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (both or neither: without
 * them, the SDK's default chain: env, profile, instance role), S3_PREFIX (key prefix).
 */
export function readS3StoreConfig(env: EnvReader): S3StoreConfig | null {
  const bucket = env.optionalString('S3_BUCKET');
  const endpoint = env.url('S3_ENDPOINT', ['http:', 'https:']);
  const publicEndpoint = env.url('S3_PUBLIC_ENDPOINT', ['http:', 'https:']);
  const accessKeyId = env.optionalString('S3_ACCESS_KEY_ID');
  const secretAccessKey = env.optionalString('S3_SECRET_ACCESS_KEY');
  const region = env.string('S3_REGION', 'us-east-1');
  const forcePathStyle = env.boolean('S3_FORCE_PATH_STYLE', endpoint !== undefined);
  const prefix = env.string('S3_PREFIX', '');
  if (!bucket) {
    if (endpoint || accessKeyId) throw new ConfigError('S3_BUCKET', 'is required when S3_ENDPOINT or S3_ACCESS_KEY_ID is set');
    return null;
  }
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError('S3_BUCKET', 'must be a bucket name (3-63 lower-case letters, digits, . and -)');
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey))
    throw new ConfigError(accessKeyId ? 'S3_SECRET_ACCESS_KEY' : 'S3_ACCESS_KEY_ID', 'is required with the other');
  if (/^\/|\.\./.test(prefix)) throw new ConfigError('S3_PREFIX', 'must not start with / or contain ..');
  return { bucket, region, endpoint, publicEndpoint, forcePathStyle, accessKeyId, secretAccessKey, prefix };
}

/**
 * S3 through the AWS SDK v3 client; signed links through its presigner.
 *
 * The SDK is loaded on the store's first use, not with the process: its modules cost every service ~0.1 s of CPU
 * at start and their memory (a CPU profile of each service's start), and most deployments keep media in Postgres
 * or touch S3 only when a file is stored or fetched.
 */
export class S3ObjectStore implements ObjectStore {
  readonly description: string;
  private sdk?: Promise<S3Sdk>;

  constructor(private readonly config: S3StoreConfig) {
    this.description = `s3://${config.bucket}/${config.prefix}`;
  }

  keyOf(instanceId: string, fileId: string): string {
    return `${this.config.prefix}${instanceId}/${fileId}`;
  }

  async put(key: string, data: Buffer, mimetype: string): Promise<void> {
    const { s3, client } = await this.loaded();
    await client.send(new s3.PutObjectCommand({ Bucket: this.config.bucket, Key: key, Body: data, ContentType: mimetype, ContentLength: data.length }));
  }

  async get(key: string): Promise<Buffer | null> {
    const { s3, client } = await this.loaded();
    try {
      const answer = await client.send(new s3.GetObjectCommand({ Bucket: this.config.bucket, Key: key }));
      if (!answer.Body) return null;
      return Buffer.from(await answer.Body.transformToByteArray());
    } catch (error) {
      if (error instanceof s3.NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return null;
      throw error;
    }
  }

  async delete(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const { s3, client } = await this.loaded();
    for (let from = 0; from < keys.length; from += 1000) {
      const batch = keys.slice(from, from + 1000);
      const answer = await client.send(
        new s3.DeleteObjectsCommand({ Bucket: this.config.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
      );
      const failed = (answer.Errors ?? []).filter((error) => error.Code !== 'NoSuchKey');
      if (failed.length) throw new Error(`S3 refused to delete ${failed.length} object(s): ${failed[0].Code} ${failed[0].Message ?? ''}`.trim());
    }
  }

  async signedUrl(key: string, options: { expiresInSeconds: number; contentType: string; contentDisposition: string }): Promise<string> {
    const { s3, signer, getSignedUrl } = await this.loaded();
    return getSignedUrl(
      signer,
      new s3.GetObjectCommand({
        Bucket: this.config.bucket,
        Key: key,
        ResponseContentType: options.contentType,
        ResponseContentDisposition: options.contentDisposition,
        ResponseCacheControl: 'private, max-age=3600',
      }),
      { expiresIn: Math.max(1, Math.min(MAX_SIGNED_SECONDS, Math.floor(options.expiresInSeconds))) },
    );
  }

  /** The SDK and this store's clients, made once (a load that failed is tried again by the next call). */
  private loaded(): Promise<S3Sdk> {
    this.sdk ??= loadS3Sdk(this.config).catch((error: unknown) => {
      this.sdk = undefined;
      throw error;
    });
    return this.sdk;
  }
}

interface S3Sdk {
  s3: typeof import('@aws-sdk/client-s3');
  getSignedUrl: (typeof import('@aws-sdk/s3-request-presigner'))['getSignedUrl'];
  client: S3Client;
  /** The client whose endpoint signed links name (S3_PUBLIC_ENDPOINT), else `client`. */
  signer: S3Client;
}

async function loadS3Sdk(config: S3StoreConfig): Promise<S3Sdk> {
  const [s3, { getSignedUrl }] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]);
  const credentials = config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined;
  const base = { region: config.region, forcePathStyle: config.forcePathStyle, ...(credentials ? { credentials } : {}) };
  const client = new s3.S3Client({ ...base, ...(config.endpoint ? { endpoint: config.endpoint } : {}) });
  const signingEndpoint = config.publicEndpoint ?? config.endpoint;
  const signer = config.publicEndpoint ? new s3.S3Client({ ...base, ...(signingEndpoint ? { endpoint: signingEndpoint } : {}) }) : client;
  return { s3, getSignedUrl, client, signer };
}

const fromEnv = new Map<string, ObjectStore | null>();

/**
 * The process's object store as env says (null: media stays in Postgres), one per configuration. The
 * repositories that keep media take it by default, so every process (gateway, worker, dispatcher,
 * Chatwoot) stores and finds files the same way without wiring.
 */
export function objectStoreFromEnv(env: NodeJS.ProcessEnv = process.env): ObjectStore | null {
  const config = readS3StoreConfig(new EnvReader(env));
  const cacheKey = JSON.stringify(config);
  if (!fromEnv.has(cacheKey)) fromEnv.set(cacheKey, config ? new S3ObjectStore(config) : null);
  return fromEnv.get(cacheKey) ?? null;
}
