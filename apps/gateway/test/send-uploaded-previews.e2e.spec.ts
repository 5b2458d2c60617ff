import { createHash } from 'node:crypto';
import { htmlPage, pdf, png, startFilesServer, type FilesServer } from './support/files-server';
import { nextPhone, Stack } from './support/stack';

/**
 * Sends whose media the worker uploads next to the message: a large link preview's image
 * (`linkPreviewLarge`) and the document of a payment request (`fileUrl`). The receiving simulated
 * phone decodes the message; the uploaded file's hash proves which bytes went up.
 */
describe('uploaded link previews and payment documents (HTTP → worker upload → simulated phone)', () => {
  const stack = new Stack();
  let token: string;
  let contact: string;
  let files: FilesServer;
  const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('base64');

  const received = async (messageId: string) => (await stack.received(contact, messageId)).message;

  beforeAll(async () => {
    await stack.start();
    ({ token } = await stack.connectedInstance('uploads'));
    contact = nextPhone('5561');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
    files = await startFilesServer({
      '/page': htmlPage(`<html><head><title>Loja</title><meta property="og:image" content="/cover.png"></head></html>`),
      '*.pdf': { contentType: 'application/pdf', body: pdf },
    });
  }, 60_000);

  afterAll(async () => {
    await files?.close();
    await stack.stop();
  });

  describe('POST /send/text with linkPreviewLarge', () => {
    it('should upload the page’s image and send its reference instead of only an inline thumbnail', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/text', {
        token,
        body: { number: contact, text: `veja ${files.url}/page`, linkPreview: true, linkPreviewLarge: true },
      });
      expect(status).toBe(200);
      const preview = (await received(body.messageid)).extendedTextMessage;
      expect(preview).toMatchObject({ title: 'Loja', matchedText: `${files.url}/page` });
      expect(preview.thumbnailDirectPath).toMatch(/^\//);
      expect(preview.mediaKey).toBeTruthy();
      expect(preview.thumbnailSha256).toBe(sha256(png));
      expect(preview.thumbnailEncSha256).toBeTruthy();
      expect(preview.jpegThumbnail).toBeTruthy();
    });

    it('should upload a custom base64 image', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/text', {
        token,
        body: {
          number: contact,
          text: `veja ${files.url}/page`,
          linkPreview: true,
          linkPreviewLarge: true,
          linkPreviewTitle: 'Oferta',
          linkPreviewImage: `data:image/png;base64,${png.toString('base64')}`,
        },
      });
      expect(status).toBe(200);
      const preview = (await received(body.messageid)).extendedTextMessage;
      expect(preview).toMatchObject({ title: 'Oferta' });
      expect(preview.thumbnailSha256).toBe(sha256(png));
      expect(preview.thumbnailDirectPath).toBeTruthy();
    });

    it('should keep a small preview (inline thumbnail, nothing uploaded) without linkPreviewLarge', async () => {
      const { body } = await stack.gw.call('POST', '/send/text', {
        token,
        body: { number: contact, text: `veja ${files.url}/page`, linkPreview: true, linkPreviewLarge: false },
      });
      const preview = (await received(body.messageid)).extendedTextMessage;
      expect(preview.jpegThumbnail).toBeTruthy();
      expect(preview.thumbnailDirectPath).toBeUndefined();
    });

    it('should refuse a custom preview image on a private address outside the allowlist', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/text', {
        token,
        body: {
          number: contact,
          text: `veja ${files.url}/page`,
          linkPreview: true,
          linkPreviewLarge: true,
          linkPreviewImage: 'http://169.254.169.254/latest/x.png',
        },
      });
      expect(status).toBe(400);
      expect(body.error).toMatch(/^linkPreviewImage refused/);
    });

    it('should refuse a custom preview image that is neither a URL nor base64', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/text', {
        token,
        body: { number: contact, text: `veja ${files.url}/page`, linkPreview: true, linkPreviewLarge: true, linkPreviewImage: 'not an image!' },
      });
      expect(status).toBe(400);
      expect(typeof body.error).toBe('string');
    });
  });

  describe('POST /send/request-payment with fileUrl', () => {
    const payment = {
      amount: 349.5,
      text: 'Pedido #457 com boleto',
      pixKey: '12345678000190',
      pixType: 'CNPJ',
      boletoCode: '34191.79001 01043.510047 91020.150008 5 91070026000',
    };
    const headerOf = (message: Record<string, any>) => (message.viewOnceMessage?.message ?? message).interactiveMessage.header;

    it('should attach the document of a URL to the flow’s header, named by fileName', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/request-payment', {
        token,
        body: { number: contact, ...payment, title: 'Fatura', fileUrl: `${files.url}/boleto-457.pdf`, fileName: 'Boleto 457.pdf' },
      });
      expect(status).toBe(200);
      expect(body.sendFunction).toBe('SendRequestPayment');
      const header = headerOf(await received(body.messageid));
      expect(header).toMatchObject({ title: 'Fatura', hasMediaAttachment: true, documentMessage: { mimetype: 'application/pdf', fileName: 'Boleto 457.pdf' } });
      expect(header.documentMessage.fileSha256).toBe(sha256(pdf));
      expect(header.documentMessage.directPath).toBeTruthy();
    });

    it('should attach a base64 document, named after the URL when fileName is absent', async () => {
      const base64 = await stack.gw.call('POST', '/send/request-payment', {
        token,
        body: { number: contact, ...payment, fileUrl: pdf.toString('base64'), fileName: 'fatura.pdf' },
      });
      expect(base64.status).toBe(200);
      expect(base64.body.sendPayload.fileUrl).not.toContain('PDF');
      const header = headerOf(await received(base64.body.messageid));
      expect(header.documentMessage).toMatchObject({ mimetype: 'application/pdf', fileName: 'fatura.pdf', fileSha256: sha256(pdf) });

      const unnamed = await stack.gw.call('POST', '/send/request-payment', {
        token,
        body: { number: contact, ...payment, fileUrl: `${files.url}/docs/inv-789.pdf` },
      });
      expect(unnamed.status).toBe(200);
      expect(headerOf(await received(unnamed.body.messageid)).documentMessage.fileName).toBe('inv-789.pdf');
    });

    it('should refuse a document on a private address outside the allowlist, and a file that is not base64', async () => {
      const privateUrl = await stack.gw.call('POST', '/send/request-payment', {
        token,
        body: { number: contact, ...payment, fileUrl: 'http://10.0.0.1/boleto.pdf' },
      });
      expect(privateUrl.status).toBe(400);
      expect(privateUrl.body.error).toMatch(/refused/);
      const garbage = await stack.gw.call('POST', '/send/request-payment', { token, body: { number: contact, ...payment, fileUrl: '%%% not a file %%%' } });
      expect(garbage).toEqual({ status: 400, body: { error: 'file must be a URL or base64' } });
    });
  });
});
