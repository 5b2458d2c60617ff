import { ASYNC_DISPATCHER_DEFAULTS, AsyncDispatcher } from '@gw/dispatch';
import { ChatRepository, InstanceRepository, SendQueueRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { htmlPage, png, startFilesServer, type FilesServer } from './support/files-server';
import { nextPhone, Stack, waitFor } from './support/stack';

const GROUP_NOT_FOUND = 'group not found: it does not exist or this instance is not in it';

/**
 * Issue #12, "0 × 5xx from bad input" and media safety, through the whole stack: a send to a group that
 * does not exist is a 404 (its queued record says so), a thumbnail that is neither URL nor base64 a 400,
 * and a file whose bytes are not the kind the send claims is refused before anything reaches WhatsApp.
 */
describe('sends with unknown groups, bad thumbnails and mislabelled media (HTTP → worker → Baileys → simulated phone)', () => {
  const stack = new Stack();
  let token: string;
  let instanceId: string;
  let files: FilesServer;
  const unknownGroup = '120363999999999999@g.us';

  const post = (path: string, body: unknown) => stack.gw.call('POST', path, { token, body });
  const newContact = async () => {
    const phone = nextPhone('5563');
    await stack.control('POST', '/sim/accounts', { phone, name: 'Cliente' });
    return phone;
  };
  /** What `phone` received, once a sentinel text sent after everything else arrived. */
  const everythingReceived = async (phone: string) => {
    const sentinel = await post('/send/text', { number: phone, text: 'sentinel' });
    expect(sentinel.status).toBe(200);
    await stack.received(phone, sentinel.body.messageid);
    return (await stack.inbox(phone, 500)).filter((entry) => entry.id !== sentinel.body.messageid);
  };

  beforeAll(async () => {
    await stack.start();
    ({ token, id: instanceId } = await stack.connectedInstance('bad-input'));
    files = await startFilesServer({
      '/page.png': htmlPage('<!DOCTYPE html><html><head><title>Not an image</title></head><body>hi</body></html>'),
      '/real.png': { contentType: 'image/png', body: png },
      '/report.html': htmlPage('<html><body>report</body></html>'),
    });
  }, 90_000);

  afterAll(async () => {
    await files?.close();
    await stack.stop();
  });

  describe('a group that does not exist', () => {
    it('should answer 404 saying so, not 502', async () => {
      expect(await post('/send/text', { number: unknownGroup, text: 'olá grupo' })).toEqual({ status: 404, body: { error: GROUP_NOT_FOUND } });
      expect(await post('/send/text', { number: unknownGroup, text: 'olá todos', mentions: 'all' })).toEqual({ status: 404, body: { error: GROUP_NOT_FOUND } });
    });

    it('should store a queued send to it as Failed with that reason', async () => {
      const dispatcher = new AsyncDispatcher(
        new SendQueueRepository(stack.db.dataSource),
        new InstanceRepository(stack.db.dataSource),
        new ChatRepository(stack.db.dataSource),
        stack.bus,
        { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'bad-input', pollIntervalMs: 200 },
        createLogger('dispatcher', 'silent'),
      );
      try {
        const queued = await post('/send/text', { number: unknownGroup, text: 'na fila', async: true });
        expect(queued).toMatchObject({ status: 200, body: { status: 'Queued' } });
        dispatcher.start();
        const [row] = await waitFor(
          () =>
            stack.db.dataSource.query(`SELECT status, error FROM messages WHERE instance_id = $1 AND message_id = $2`, [
              instanceId,
              queued.body.messageid,
            ]) as Promise<Array<{ status: string; error: string }>>,
          (rows) => rows[0]?.status === 'Failed',
          15_000,
          'the queued send Failed',
        );
        expect(row.error).toContain(GROUP_NOT_FOUND);
      } finally {
        await dispatcher.stop();
      }
    });
  });

  describe('thumbnails', () => {
    it('should answer 400 naming the field for a thumbnail that is neither URL nor base64, and send nothing', async () => {
      const contact = await newContact();
      const media = await post('/send/media', { number: contact, type: 'image', file: `${files.url}/real.png`, thumbnail: 'not base64!' });
      expect(media).toEqual({ status: 400, body: { error: 'thumbnail must be an http(s) URL or base64' } });
      const preview = await post('/send/text', { number: contact, text: `veja ${files.url}/page.png`, linkPreview: true, linkPreviewImage: 'ftp://x/y.png' });
      expect(preview).toEqual({ status: 400, body: { error: 'linkPreviewImage must be an http(s) URL or base64' } });
      expect(await everythingReceived(contact)).toEqual([]);
    });

    it('should still take a base64 (or data URI) thumbnail', async () => {
      const contact = await newContact();
      const { status } = await post('/send/media', {
        number: contact,
        type: 'image',
        file: `${files.url}/real.png`,
        thumbnail: `data:image/png;base64,${png.toString('base64')}`,
      });
      expect(status).toBe(200);
    });
  });

  describe('the real type of a file', () => {
    it('should refuse an HTML page given as an image by URL with 400, and nothing reaches the phone', async () => {
      const contact = await newContact();
      const { status, body } = await post('/send/media', { number: contact, type: 'image', file: `${files.url}/page.png` });
      expect(status).toBe(400);
      expect(body.error).toBe('file is not an image (jpeg, png, gif or webp): its bytes are text/html');
      expect(await everythingReceived(contact)).toEqual([]);
    });

    it('should refuse the same page given as base64 before staging it, and a PNG given as a video', async () => {
      const contact = await newContact();
      const page = Buffer.from('<html><body>hi</body></html>').toString('base64');
      expect(await post('/send/media', { number: contact, type: 'image', file: page, mimetype: 'image/jpeg' })).toEqual({
        status: 400,
        body: { error: 'file is not an image (jpeg, png, gif or webp): its bytes are text/html, declared as image/jpeg' },
      });
      const video = await post('/send/media', { number: contact, type: 'video', file: `${files.url}/real.png` });
      expect(video).toEqual({ status: 400, body: { error: 'file is not a video (mp4, 3gp or mov): its bytes are image/png' } });
      expect(await everythingReceived(contact)).toEqual([]);
    });

    it('should send a real PNG as an image, declared image/png whatever the send claimed', async () => {
      const contact = await newContact();
      const { status, body } = await post('/send/media', { number: contact, type: 'image', file: `${files.url}/real.png`, mimetype: 'image/jpeg' });
      expect(status).toBe(200);
      expect((await stack.received(contact, body.messageid)).message.imageMessage).toMatchObject({ mimetype: 'image/png' });
    });

    it('should send an HTML file as a document, never declared text/html', async () => {
      const contact = await newContact();
      const { status, body } = await post('/send/media', { number: contact, type: 'document', file: `${files.url}/report.html` });
      expect(status).toBe(200);
      expect((await stack.received(contact, body.messageid)).message.documentMessage).toMatchObject({
        mimetype: 'application/octet-stream',
        fileName: 'report.html',
      });
    });
  });
});
