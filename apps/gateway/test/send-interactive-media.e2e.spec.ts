import { png, startFilesServer, type FilesServer } from './support/files-server';
import { nextPhone, Stack } from './support/stack';

/** Images in carousel cards and button menus: uploaded by the worker and carried in the headers. */
describe('interactive messages with media headers (HTTP → worker upload → simulated phone)', () => {
  const stack = new Stack();
  let token: string;
  let contact: string;
  let files: FilesServer;

  const received = async (messageId: string) => (await stack.received(contact, messageId)).message;
  const interactiveOf = (message: Record<string, any>) => message.viewOnceMessage?.message?.interactiveMessage ?? message.interactiveMessage;

  beforeAll(async () => {
    await stack.start();
    ({ token } = await stack.connectedInstance('media-headers'));
    contact = nextPhone('5511');
    await stack.control('POST', '/sim/accounts', { phone: contact });
    files = await startFilesServer();
  }, 60_000);
  afterAll(async () => {
    await files?.close();
    await stack.stop();
  });

  it('should put card images in the carousel cards’ headers', async () => {
    const { status, body } = await stack.gw.call('POST', '/send/carousel', {
      token,
      body: {
        number: contact,
        text: 'Ofertas',
        carousel: [
          { text: 'Camisa', image: `${files.url}/camisa.png`, buttons: [{ id: 'c1', text: 'Quero', type: 'REPLY' }] },
          { text: 'Boné', image: png.toString('base64'), buttons: [{ id: 'https://shop.example/bone', text: 'Ver', type: 'URL' }] },
        ],
      },
    });
    expect(status).toBe(200);
    const cards = interactiveOf(await received(body.messageid)).carouselMessage.cards;
    for (const card of cards) {
      expect(card.header.hasMediaAttachment).toBe(true);
      expect(card.header.imageMessage).toMatchObject({ mimetype: 'image/png' });
      expect(card.header.imageMessage.directPath ?? card.header.imageMessage.url).toBeTruthy();
    }
  });

  it('should put imageButton in a button menu’s header', async () => {
    const { status, body } = await stack.gw.call('POST', '/send/menu', {
      token,
      body: { number: contact, type: 'button', text: 'Escolha', choices: ['Sim|s', 'Não|n'], imageButton: `${files.url}/banner.png` },
    });
    expect(status).toBe(200);
    const header = interactiveOf(await received(body.messageid)).header;
    expect(header).toMatchObject({ hasMediaAttachment: true, imageMessage: { mimetype: 'image/png' } });
  });

  it('should refuse a header image on a private address outside the allowlist', async () => {
    const { status, body } = await stack.gw.call('POST', '/send/menu', {
      token,
      body: { number: contact, type: 'button', text: 'x', choices: ['a'], imageButton: 'http://169.254.169.254/x.png' },
    });
    expect(status).toBe(400);
    expect(body.error).toMatch(/refused/);
  });
});
