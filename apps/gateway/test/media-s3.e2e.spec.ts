import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startTestS3, TEST_S3_CREDENTIALS, type TestS3Server } from '@gw/testing';
import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * The media store in S3-compatible storage (s3rver on loopback, S3_* env), with real Baileys against
 * the simulator: received media downloaded with /message/download comes back as a signed, expiring
 * link to the bucket; a base64 file staged for sending goes through the bucket to the worker and out
 * to WhatsApp; a quick reply's file is kept there and /files/<id> redirects to a signed link.
 */
describe('media in S3-compatible storage (HTTP, real Baileys)', () => {
  const stack = new Stack();
  let s3: TestS3Server;
  let bucket: S3Client;
  let token: string;
  let owner: string;
  let contact: string;
  const saved: Record<string, string | undefined> = {};
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
  const objects = async () => ((await bucket.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((object) => object.Key as string);

  beforeAll(async () => {
    s3 = await startTestS3();
    // Every process of the stack (gateway, worker) reads the media store from env.
    for (const [name, value] of Object.entries(s3.env)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    bucket = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: TEST_S3_CREDENTIALS });
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('s3-media'));
    contact = nextPhone('5562');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Carla' });
  }, 60_000);
  afterAll(async () => {
    await stack.stop();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    bucket?.destroy();
    await s3?.close();
  });

  it('answers /message/download with a signed link to the bucket that serves the image and expires', async () => {
    await stack.control('POST', `/sim/accounts/${contact}/send-media`, {
      to: owner,
      type: 'image',
      data: png.toString('base64'),
      mimetype: 'image/png',
      caption: 'nota',
    });
    const found = await waitFor(
      () => stack.gw.call('POST', '/message/find', { token, body: { fromMe: false, limit: 20 } }),
      (r) => r.body.messages?.some((m: Record<string, unknown>) => m.text === 'nota'),
      15_000,
      'the image',
    );
    const message = found.body.messages.find((m: Record<string, unknown>) => m.text === 'nota');
    const { status, body } = await stack.gw.call('POST', '/message/download', { token, body: { id: message.id, return_link: true, return_base64: true } });
    expect(status).toBe(200);
    expect(Buffer.from(body.base64Data, 'base64').equals(png)).toBe(true);
    const link = new URL(body.fileURL);
    expect(link.origin).toBe(s3.endpoint);
    expect(link.searchParams.get('X-Amz-Signature')).toBeTruthy();
    expect(Number(link.searchParams.get('X-Amz-Expires'))).toBeGreaterThan(6 * 24 * 3600);
    const served = await fetch(link);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
    // The bytes are in the bucket only; the row in Postgres says where.
    const [row] = await stack.db.dataSource.query(`SELECT data, backend, object_key FROM stored_files WHERE object_key = $1`, [
      link.pathname.split('/').slice(2).join('/'),
    ]);
    expect(row).toMatchObject({ data: null, backend: 's3' });
    // The message record keeps the link as its fileURL.
    const again = await stack.gw.call('POST', '/message/find', { token, body: { id: message.id } });
    expect(again.body.messages[0].fileURL).toBe(body.fileURL);
  });

  it('sends a base64 file staged in the bucket: the worker reads it from there', async () => {
    const before = (await objects()).length;
    const { status, body } = await stack.gw.call('POST', '/send/media', {
      token,
      body: { number: contact, type: 'document', file: Buffer.from('relatório em pdf').toString('base64'), docName: 'r.pdf', mimetype: 'application/pdf' },
    });
    expect(status).toBe(200);
    expect((await objects()).length).toBeGreaterThan(before);
    expect((await stack.received(contact, body.messageid)).message.documentMessage).toMatchObject({ fileName: 'r.pdf', mimetype: 'application/pdf' });
  });

  it('keeps a quick reply’s file in the bucket; /files/<id> redirects to a short-lived signed link', async () => {
    const { status, body } = await stack.gw.call('POST', '/quickreply/edit', {
      token,
      body: { shortCut: 'logo', message: { kind: 'media', type: 'image', file: png.toString('base64'), text: 'logo' } },
    });
    expect(status).toBe(200);
    expect(body.quickReply.message.file).toMatch(/\/files\/[0-9a-f]{32}$/);
    const fileUrl = new URL(body.quickReply.message.file);
    const id = fileUrl.pathname.split('/').pop() as string;
    expect((await objects()).some((key) => key.endsWith(`/${id}`))).toBe(true);
    const redirect = await fetch(`${stack.gw.baseUrl}/files/${id}`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = new URL(redirect.headers.get('location') as string);
    expect(location.origin).toBe(s3.endpoint);
    expect(Number(location.searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(300);
    const followed = await fetch(`${stack.gw.baseUrl}/files/${id}`);
    expect(followed.status).toBe(200);
    expect(Buffer.from(await followed.arrayBuffer()).equals(png)).toBe(true);
    expect((await fetch(`${stack.gw.baseUrl}/files/${'0'.repeat(32)}`)).status).toBe(404);
  });
});
