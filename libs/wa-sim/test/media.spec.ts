import { Agent as HttpsAgent } from 'https';
import { downloadMediaMessage } from '@whiskeysockets/baileys';
import type { WASocket } from '@whiskeysockets/baileys';
import { Agent as UndiciAgent } from 'undici';
import { MEDIA_TLS_CERT, startSimulator } from '../src';
import type { InboxEntry, RunningSimulator } from '../src';
import { endSocket, getJson, postJson, provisionAndConnect, silent, trustSimulator, waitFor } from './helpers';

jest.setTimeout(30_000);

const GATEWAY = '5511900000501';
const CONTACT = '5511988880501';

describe('media', () => {
  let running: RunningSimulator;
  let sock: WASocket;
  // What the session worker passes to Baileys: trust the simulator's self-signed media certificate.
  const fetchAgent = new HttpsAgent({ ca: MEDIA_TLS_CERT });
  const dispatcher = new UndiciAgent({ connect: { ca: MEDIA_TLS_CERT } });

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: GATEWAY });
    await postJson(running, '/sim/accounts', { phone: CONTACT });
    sock = (await provisionAndConnect(running, GATEWAY, { fetchAgent, options: { dispatcher } })).sock;
  });

  afterAll(async () => {
    endSocket(sock);
    await running.stop();
    await dispatcher.close();
  });

  it('should upload media from the linked device and let the phone decrypt it', async () => {
    const file = Buffer.from('%PDF-1.4 not really a pdf, just bytes for the simulator '.repeat(50));
    const sent = await sock.sendMessage(`${CONTACT}@s.whatsapp.net`, { document: file, mimetype: 'application/pdf', fileName: 'report.pdf' });
    const id = sent!.key.id!;
    let entry: InboxEntry | undefined;
    for (let i = 0; i < 20 && !entry; i++) {
      entry = (await getJson<InboxEntry[]>(running, `/sim/accounts/${CONTACT}/inbox?waitMs=300`)).body.find((e) => e.id === id);
    }
    expect(entry?.message).toMatchObject({ documentMessage: { fileName: 'report.pdf', mimetype: 'application/pdf' } });
    const res = await fetch(`${running.controlUrl}/sim/accounts/${CONTACT}/inbox/${id}/media`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await res.arrayBuffer()).equals(file)).toBe(true);
  });

  it('should send media from the phone that Baileys can download', async () => {
    const image = Buffer.alloc(4096, 7);
    const received = waitFor(sock, 'messages.upsert', ({ messages }) => messages.find((m) => m.message?.imageMessage?.caption === 'look'));
    const res = await postJson(running, `/sim/accounts/${CONTACT}/send-media`, { to: GATEWAY, type: 'image', data: image.toString('base64'), caption: 'look' });
    expect(res.status).toBe(200);
    const msg = await received;
    const bytes = await downloadMediaMessage(msg, 'buffer', { options: { dispatcher } } as never, { logger: silent, reuploadRequest: sock.updateMediaMessage });
    expect(Buffer.from(bytes as Buffer).equals(image)).toBe(true);
  });
});
