import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { EnvReader } from '@gw/platform';
import { FileRepository, InstanceRepository, objectStoreFromEnv, QuickReplyRepository, readS3StoreConfig, S3ObjectStore } from '@gw/persistence';
import { openTestDatabase, startTestS3, type TestDatabase, type TestS3Server, TEST_S3_CREDENTIALS } from '@gw/testing';

const headers = { contentType: 'image/png', contentDisposition: 'inline; filename="a.png"' };

/** The media store against s3rver on loopback (the S3 backend) and Postgres (the embedded default). */
describe('media store', () => {
  let db: TestDatabase;
  let s3: TestS3Server;
  let store: S3ObjectStore;
  let bucket: S3Client;
  const instanceId = `m${Math.random().toString(16).slice(2, 14)}`;
  const other = `o${Math.random().toString(16).slice(2, 14)}`;
  const keys = async () =>
    ((await bucket.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? [])
      .map((object) => object.Key as string)
      .filter((key) => key.startsWith(instanceId));
  const expire = (id: string) => db.dataSource.query(`UPDATE stored_files SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);

  beforeAll(async () => {
    db = await openTestDatabase();
    s3 = await startTestS3();
    store = new S3ObjectStore(readS3StoreConfig(new EnvReader(s3.env))!);
    bucket = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: TEST_S3_CREDENTIALS });
    for (const id of [instanceId, other]) await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
  });
  afterAll(async () => {
    bucket?.destroy();
    await s3?.close();
    await db?.close();
  });

  describe('S3 backend', () => {
    it('keeps the bytes in the bucket and the row in Postgres, and reads them back for their instance only', async () => {
      const sut = new FileRepository(db.dataSource, store);
      expect(sut.backend).toBe('s3');
      const data = Buffer.from('\x89PNG fake image bytes');
      const id = await sut.store(instanceId, data, 'image/png', 'a.png', 60_000);
      const [row] = await db.dataSource.query(`SELECT data, backend, object_key, size FROM stored_files WHERE id = $1`, [id]);
      expect(row).toMatchObject({ data: null, backend: 's3', object_key: `${instanceId}/${id}`, size: String(data.length) });
      expect(await keys()).toContain(`${instanceId}/${id}`);
      expect(await sut.read(id, instanceId)).toMatchObject({ id, instanceId, mimetype: 'image/png', fileName: 'a.png', data });
      expect(await sut.read(id, other)).toBeNull();
      expect(await sut.info(id, other)).toBeNull();
    });

    it('answers signed links that serve the bytes with the given headers, and that expire', async () => {
      const sut = new FileRepository(db.dataSource, store);
      const id = await sut.store(instanceId, Buffer.from('linked'), 'image/png', 'a.png', 60_000);
      const info = (await sut.info(id, instanceId))!;
      const link = (await sut.signedLink(info, headers))!;
      expect(link).toMatch(new RegExp(`^${s3.endpoint}/${s3.bucket}/${instanceId}/${id}\\?.*X-Amz-Signature=`));
      // Valid until the file expires (60 s), not the 7 days at most.
      expect(Number(new URL(link).searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(60);
      const response = await fetch(link);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      expect(response.headers.get('content-disposition')).toBe('inline; filename="a.png"');
      expect(await response.text()).toBe('linked');
      // The headers are query parameters under the signature (s3rver checks expiry, not V4 signatures:
      // that a changed parameter is refused is AWS's and MinIO's part, not testable here).
      expect(new URL(link).searchParams.get('response-content-disposition')).toBe('inline; filename="a.png"');
      expect(new URL(link).searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
      // An expired link is refused.
      const short = (await sut.signedLink(info, headers, 1))!;
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      expect((await fetch(short)).status).toBe(403);
    });

    it('purges expired files from Postgres and their objects from the bucket', async () => {
      const sut = new FileRepository(db.dataSource, store);
      const gone = await sut.store(instanceId, Buffer.from('old'), 'text/plain', 'old.txt', 60_000);
      const kept = await sut.store(instanceId, Buffer.from('new'), 'text/plain', 'new.txt', 60_000);
      await expire(gone);
      expect(await sut.read(gone, instanceId)).toBeNull();
      expect(await sut.purgeExpired()).toBeGreaterThanOrEqual(1);
      expect(await keys()).not.toContain(`${instanceId}/${gone}`);
      expect(await keys()).toContain(`${instanceId}/${kept}`);
      expect(await db.dataSource.query(`SELECT id FROM stored_files WHERE id = $1`, [gone])).toEqual([]);
    });

    it('keeps a quick reply’s file in the bucket; deleting the reply queues its object, and retention deletes it', async () => {
      const replies = new QuickReplyRepository(db.dataSource, store);
      const created = await replies.create(
        instanceId,
        { shortCut: 'menu', aiDescription: '', message: { type: 'image' } },
        { data: Buffer.from('menu image'), mimetype: 'image/jpeg', fileName: 'menu.jpg' },
        10_000_000,
      );
      const fileId = (created as { fileId: string }).fileId;
      expect(await keys()).toContain(`${instanceId}/${fileId}`);
      const files = new FileRepository(db.dataSource, store);
      expect((await files.read(fileId, instanceId))?.data.toString()).toBe('menu image');
      // Never expiring: its link lasts the 7 days SigV4 allows.
      const link = (await files.signedLink((await files.info(fileId, instanceId))!, headers))!;
      expect(new URL(link).searchParams.get('X-Amz-Expires')).toBe('604800');
      expect(await replies.delete(instanceId, (created as { id: string }).id)).toBe(true);
      expect(await files.read(fileId, instanceId)).toBeNull();
      expect(await db.dataSource.query(`SELECT object_key FROM media_object_deletions WHERE object_key = $1`, [`${instanceId}/${fileId}`])).toHaveLength(1);
      await files.purgeExpired();
      expect(await keys()).not.toContain(`${instanceId}/${fileId}`);
      expect(await db.dataSource.query(`SELECT object_key FROM media_object_deletions`)).toEqual([]);
    });

    it('deletes the objects of an instance that is deleted (its rows go by cascade)', async () => {
      const doomed = `d${Math.random().toString(16).slice(2, 14)}`;
      await new InstanceRepository(db.dataSource).create({ id: doomed, token: `tok-${doomed}`, name: doomed });
      const files = new FileRepository(db.dataSource, store);
      const id = await files.store(doomed, Buffer.from('bye'), 'text/plain', 'bye.txt', 60_000);
      const all = async () => ((await bucket.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((object) => object.Key);
      expect(await all()).toContain(`${doomed}/${id}`);
      await db.dataSource.query(`DELETE FROM instances WHERE id = $1`, [doomed]);
      expect(await files.deleteQueuedObjects()).toBe(1);
      expect(await all()).not.toContain(`${doomed}/${id}`);
    });

    it('keeps the queue when the bucket cannot be reached, and deletes the objects once it can', async () => {
      const files = new FileRepository(db.dataSource, store);
      const id = await files.store(instanceId, Buffer.from('later'), 'text/plain', 'later.txt', 60_000);
      await expire(id);
      const unreachable = new S3ObjectStore({ ...readS3StoreConfig(new EnvReader(s3.env))!, endpoint: 'http://127.0.0.1:9' });
      await expect(new FileRepository(db.dataSource, unreachable).purgeExpired()).rejects.toThrow();
      expect(await db.dataSource.query(`SELECT object_key FROM media_object_deletions WHERE object_key = $1`, [`${instanceId}/${id}`])).toHaveLength(1);
      expect(await keys()).toContain(`${instanceId}/${id}`);
      await files.purgeExpired();
      expect(await keys()).not.toContain(`${instanceId}/${id}`);
    });
  });

  describe('Postgres backend (the default)', () => {
    it('keeps the bytes in the row, answers no signed link, and purges expired rows', async () => {
      const sut = new FileRepository(db.dataSource, null);
      expect(sut.backend).toBe('postgres');
      const id = await sut.store(instanceId, Buffer.from('inline'), 'text/plain', 'a.txt', 60_000);
      const [row] = await db.dataSource.query(`SELECT data, backend, object_key FROM stored_files WHERE id = $1`, [id]);
      expect(row).toMatchObject({ data: Buffer.from('inline'), backend: 'postgres', object_key: null });
      expect((await sut.read(id, instanceId))?.data.toString()).toBe('inline');
      expect(await sut.signedLink((await sut.info(id))!, headers)).toBeNull();
      await expire(id);
      expect(await sut.purgeExpired()).toBeGreaterThanOrEqual(1);
      expect(await db.dataSource.query(`SELECT id FROM stored_files WHERE id = $1`, [id])).toEqual([]);
    });

    it('still reads files stored in S3 before, and new ones go to Postgres', async () => {
      const before = await new FileRepository(db.dataSource, store).store(instanceId, Buffer.from('from s3'), 'text/plain', 'x.txt', 60_000);
      expect((await new FileRepository(db.dataSource, store).read(before))?.data.toString()).toBe('from s3');
      await expect(new FileRepository(db.dataSource, null).read(before)).rejects.toThrow(/no bucket is configured/);
    });
  });

  describe('configuration', () => {
    it('chooses S3 when S3_BUCKET is set, Postgres otherwise', () => {
      expect(objectStoreFromEnv({})).toBeNull();
      expect(objectStoreFromEnv(s3.env)).toBeInstanceOf(S3ObjectStore);
      expect(objectStoreFromEnv(s3.env)).toBe(objectStoreFromEnv({ ...s3.env }));
      expect(readS3StoreConfig(new EnvReader({ S3_BUCKET: 'media' }))).toMatchObject({
        bucket: 'media',
        region: 'us-east-1',
        forcePathStyle: false,
        prefix: '',
      });
    });

    it.each([
      [{ S3_ENDPOINT: 'http://minio:9000' }, /S3_BUCKET/],
      [{ S3_BUCKET: 'Bad_Bucket' }, /bucket name/],
      [{ S3_BUCKET: 'media', S3_ACCESS_KEY_ID: 'x' }, /S3_SECRET_ACCESS_KEY/],
      [{ S3_BUCKET: 'media', S3_ENDPOINT: 'ftp://x' }, /S3_ENDPOINT/],
      [{ S3_BUCKET: 'media', S3_PREFIX: '../x' }, /S3_PREFIX/],
    ])('refuses %j', (env, message) => {
      expect(() => readS3StoreConfig(new EnvReader(env))).toThrow(message);
    });
  });
});
