import type { WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { RunningSimulator } from '../src';
import { endSocket, getJson, postJson, provisionAndConnect, trustSimulator, waitFor } from './helpers';

jest.setTimeout(30_000);

const OWNER = '5511900000701';
const READER = '5511900000702';

async function provisioned(running: RunningSimulator, phone: string): Promise<WASocket> {
  return (await provisionAndConnect(running, phone)).sock;
}

describe('newsletters', () => {
  let running: RunningSimulator;
  let owner: WASocket;
  let reader: WASocket;

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: OWNER });
    await postJson(running, '/sim/accounts', { phone: READER });
    owner = await provisioned(running, OWNER);
    reader = await provisioned(running, READER);
  });

  afterAll(async () => {
    endSocket(owner);
    endSocket(reader);
    await running.stop();
  });

  it('should create a channel, let others follow it, and deliver posts with a server id', async () => {
    const created = await owner.newsletterCreate('Sim news', 'all the news');
    expect(created.id).toMatch(/@newsletter$/);
    expect(created.name).toBe('Sim news');
    const meta = await reader.newsletterMetadata('invite', created.invite!);
    expect(meta?.id).toBe(created.id);
    await reader.newsletterFollow(created.id);
    const received = waitFor(reader, 'messages.upsert', ({ messages }) => messages.find((m) => m.key.remoteJid === created.id));
    await owner.sendMessage(created.id, { text: 'first post' });
    const post = await received;
    expect(post.message?.extendedTextMessage?.text ?? post.message?.conversation).toBe('first post');
    expect(post.key.server_id).toBeTruthy();
    await reader.newsletterReactMessage(created.id, post.key.server_id!, '🔥');
    const info = await getJson<{ followers: unknown[]; posts: Array<{ reactions: Record<string, number> }> }>(
      running,
      `/sim/newsletters/${encodeURIComponent(created.id)}`,
    );
    expect(info.body.followers).toHaveLength(1);
    expect(info.body.posts[0].reactions['🔥']).toBe(1);
  });

  it('should deliver posts published by a phone-owned channel', async () => {
    const channel = await postJson<{ jid: string }>(running, '/sim/newsletters', { owner: OWNER, name: 'Phone channel', followers: [READER] });
    const received = waitFor(reader, 'messages.upsert', ({ messages }) => messages.find((m) => m.message?.conversation === 'from the phone'));
    const res = await postJson(running, `/sim/newsletters/${encodeURIComponent(channel.body.jid)}/posts`, { text: 'from the phone' });
    expect(res.status).toBe(200);
    expect((await received).key.remoteJid).toBe(channel.body.jid);
  });

  it('should list posts with their view and reaction counts', async () => {
    const channel = await postJson<{ jid: string }>(running, '/sim/newsletters', { owner: OWNER, name: 'Counted', followers: [READER] });
    const jid = channel.body.jid;
    const published = await postJson<{ serverId: number }>(running, `/sim/newsletters/${encodeURIComponent(jid)}/posts`, { text: 'count me' });
    const viewed = await postJson<{ views: number }>(running, `/sim/newsletters/${encodeURIComponent(jid)}/posts/${published.body.serverId}/views`, {
      count: 3,
    });
    expect(viewed.body.views).toBe(3);
    await reader.newsletterReactMessage(jid, String(published.body.serverId), '👍');
    // What a client lists: the raw message_updates node carries a views_count child (whatsmeow notification.go:366) and the reaction counts.
    const result = await reader.newsletterFetchMessages(jid, 10, 0, 0);
    const text = JSON.stringify(result);
    expect(text).toContain('"tag":"views_count","attrs":{"count":"3"}');
    expect(text).toContain('"code":"👍"');
    expect((await postJson(running, `/sim/newsletters/${encodeURIComponent(jid)}/posts/999/views`, {})).status).toBe(404);
  });
});
