import { Stack, waitFor } from './support/stack';

type PhoneReply = { id: string; shortcut: string; message: string };
type Record = { id: string; shortCut: string; onWhatsApp: boolean; message: { kind: string; text?: string } };

/** Quick replies of the WhatsApp Business app (app-state `quick_reply` mutations) and the API's, through HTTP with real Baileys against the simulator. */
describe('quick replies on WhatsApp (HTTP → worker → Baileys → simulator app state)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown, as = token) => stack.gw.call(method, path, { token: as, body });
  const phoneReplies = async () => (await stack.control<{ quickReplies: PhoneReply[] }>('GET', `/sim/accounts/${owner}/quick-replies`)).quickReplies;
  /** The Business app on the phone saves (or deletes) a quick reply. */
  const phoneSaves = (timestamp: string, shortcut: string, message: string, deleted = false) =>
    stack.control('POST', `/sim/accounts/${owner}/app-state`, { jid: '', mod: { quickReply: { timestamp, shortcut, message, deleted } } });
  const showAll = async () => (await call('GET', '/quickreply/showall')).body as Record[];
  /** An older Business client (WA Web 2023) keeps its quick replies in regular_low instead. */
  const olderClientSaves = (timestamp: string, shortcut: string, message: string, deleted = false) =>
    stack.control('POST', `/sim/accounts/${owner}/app-state`, {
      jid: '',
      collection: 'regular_low',
      mod: { quickReply: { timestamp, shortcut, message, deleted } },
    });
  type Mutation = { index: unknown; apiVersion: number | null; operation: string; action: { [key: string]: any } | null };
  /** The quick_reply mutations the server keeps in a collection, decrypted with the account key. */
  const quickReplyMutations = async (collection: string) =>
    ((await stack.control<{ [name: string]: { mutations: Mutation[] } }>('GET', `/sim/accounts/${owner}/app-state`))[collection]?.mutations ?? []).filter(
      (mutation) => Array.isArray(mutation.index) && mutation.index[0] === 'quick_reply',
    );

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('quick-wa'));
    await stack.control('POST', '/sim/accounts', { phone: owner, business: true });
  }, 60_000);
  afterAll(() => stack.stop());

  it('should show the phone’s quick replies with onWhatsApp true and follow its edits and deletions', async () => {
    await phoneSaves('1700000001', 'oi', 'Olá! Como posso ajudar?');
    const listed = await waitFor(showAll, (all) => all.some((reply) => reply.shortCut === 'oi'), 15_000, 'the phone reply listed');
    const synced = listed.find((reply) => reply.shortCut === 'oi')!;
    expect(synced).toMatchObject({ shortCut: 'oi', onWhatsApp: true, aiDescription: '', message: { kind: 'text', text: 'Olá! Como posso ajudar?' } });

    expect((await call('GET', `/quick-replies/${synced.id}`)).body).toMatchObject({ id: synced.id, onWhatsApp: true });

    await phoneSaves('1700000001', 'oi', 'Oi! Em que posso ajudar?');
    const edited = (await showAll()).filter((reply) => reply.shortCut === 'oi');
    expect(edited).toEqual([expect.objectContaining({ id: synced.id, message: { kind: 'text', text: 'Oi! Em que posso ajudar?' } })]);

    await phoneSaves('1700000001', 'oi', '', true);
    expect((await showAll()).map((reply) => reply.shortCut)).not.toContain('oi');
  });

  it('should edit and delete a reply the phone made, the phone following, text only (uazapiGO 2.1.1; 2.1.0 answered 403)', async () => {
    await phoneSaves('1700000070', 'tchau', 'Até logo!');
    const listed = await waitFor(showAll, (all) => all.some((reply) => reply.shortCut === 'tchau'), 15_000, 'the phone reply listed');
    const synced = listed.find((reply) => reply.shortCut === 'tchau')!;

    const edited = await call('POST', '/quickreply/edit', { id: synced.id, shortCut: 'tchau', type: 'text', text: 'Até amanhã!' });
    expect(edited).toMatchObject({
      status: 200,
      body: { message: 'Quick reply updated', quickReply: { id: synced.id, onWhatsApp: true, text: 'Até amanhã!' } },
    });
    expect((await phoneReplies()).filter((reply) => reply.id === '1700000070')).toEqual([
      expect.objectContaining({ shortcut: 'tchau', message: 'Até amanhã!' }),
    ]);
    // Still the same reply after the phone is read again.
    expect((await showAll()).filter((reply) => reply.shortCut === 'tchau')).toEqual([
      expect.objectContaining({ id: synced.id, onWhatsApp: true, message: { kind: 'text', text: 'Até amanhã!' } }),
    ]);

    // On WhatsApp a reply stays a text one.
    expect(await call('POST', '/quickreply/edit', { id: synced.id, shortCut: 'tchau', type: 'image', file: 'https://example.com/a.jpg' })).toEqual({
      status: 400,
      body: { error: 'onWhatsApp applies to text quick replies only: the WhatsApp Business app keeps text replies', code: 'validation_failed' },
    });

    expect(await call('POST', '/quickreply/edit', { id: synced.id, delete: true })).toMatchObject({ status: 200, body: { message: 'Quick reply deleted' } });
    expect((await phoneReplies()).map((reply) => reply.id)).not.toContain('1700000070');
    expect((await showAll()).map((reply) => reply.shortCut)).not.toContain('tchau');
  });

  it('should store what the phone saves, edits and deletes as it happens (server_sync), without waiting for showall', async () => {
    const stored = async () =>
      (await stack.db.dataSource.query(`SELECT short_cut, message->>'text' AS text, on_whatsapp, origin FROM quick_replies WHERE wa_id = $1`, [
        '1700000050',
      ])) as Array<{ short_cut: string; text: string; on_whatsapp: boolean; origin: string }>;
    await phoneSaves('1700000050', 'endereco', 'Rua A, 10');
    expect(await waitFor(stored, (rows) => rows.length === 1, 15_000, 'the phone reply stored')).toEqual([
      { short_cut: 'endereco', text: 'Rua A, 10', on_whatsapp: true, origin: 'whatsapp' },
    ]);
    await phoneSaves('1700000050', 'endereco', 'Rua B, 20');
    await waitFor(stored, (rows) => rows[0]?.text === 'Rua B, 20', 15_000, 'the phone edit stored');
    await phoneSaves('1700000050', 'endereco', '', true);
    await waitFor(stored, (rows) => rows.length === 0, 15_000, 'the phone deletion stored');
  });

  it('should write a text reply made with onWhatsApp to the phone, and follow its edits, its removal from WhatsApp and its deletion', async () => {
    const created = await call('POST', '/quickreply/edit', {
      shortCut: 'horario',
      message: { kind: 'text', text: 'Atendemos das 8h às 18h.' },
      onWhatsApp: true,
    });
    expect(created.status).toBe(200);
    expect(created.body.quickReply).toMatchObject({ shortCut: 'horario', onWhatsApp: true, message: { kind: 'text', text: 'Atendemos das 8h às 18h.' } });
    const id = created.body.quickReply.id as string;
    expect(await phoneReplies()).toContainEqual(expect.objectContaining({ shortcut: 'horario', message: 'Atendemos das 8h às 18h.' }));

    // Still editable through the API (it is the API's own); the phone follows.
    const edited = await call('POST', '/quickreply/edit', { id, shortCut: 'horario', type: 'text', text: 'Atendemos das 9h às 17h.' });
    expect(edited.body.quickReply).toMatchObject({ id, onWhatsApp: true, message: { kind: 'text', text: 'Atendemos das 9h às 17h.' } });
    expect((await phoneReplies()).filter((reply) => reply.shortcut === 'horario').map((reply) => reply.message)).toEqual(['Atendemos das 9h às 17h.']);
    // A sync does not take it over: it stays the API's.
    expect((await showAll()).filter((reply) => reply.shortCut === 'horario')).toEqual([expect.objectContaining({ id, onWhatsApp: true })]);

    const off = await call('POST', '/quickreply/edit', { id, shortCut: 'horario', type: 'text', text: 'Atendemos das 9h às 17h.', onWhatsApp: false });
    expect(off.body.quickReply).toMatchObject({ id, onWhatsApp: false });
    expect((await phoneReplies()).map((reply) => reply.shortcut)).not.toContain('horario');

    expect(await call('POST', '/quickreply/edit', { id, delete: true })).toMatchObject({ status: 200, body: { message: 'Quick reply deleted' } });
    expect((await showAll()).map((reply) => reply.id)).not.toContain(id);
  });

  it('should refuse to convert a local reply into a WhatsApp one (uazapiGO 2.1.1), leaving it and the phone as they were', async () => {
    const local = await call('POST', '/quickreply/edit', { shortCut: 'local', type: 'text', text: 'Só aqui.' });
    const id = local.body.quickReply.id as string;
    expect(await call('POST', '/quickreply/edit', { id, shortCut: 'local', type: 'text', text: 'No WhatsApp.', onWhatsApp: true })).toEqual({
      status: 400,
      body: {
        error: 'cannot convert an existing local quick reply into a WhatsApp one: to create it on WhatsApp, send onWhatsApp: true without id',
        code: 'validation_failed',
      },
    });
    expect((await call('GET', `/quick-replies/${id}`)).body).toMatchObject({ id, onWhatsApp: false, text: 'Só aqui.' });
    expect((await phoneReplies()).map((reply) => reply.shortcut)).not.toContain('local');
    // Created there instead, without the id.
    expect(await call('POST', '/quickreply/edit', { shortCut: 'local', type: 'text', text: 'No WhatsApp.', onWhatsApp: true })).toMatchObject({
      status: 200,
      body: { quickReply: { onWhatsApp: true } },
    });
    expect((await phoneReplies()).filter((reply) => reply.shortcut === 'local').map((reply) => reply.message)).toEqual(['No WhatsApp.']);
  });

  it('should take a reply off WhatsApp when the phone deletes one the API wrote there, keeping it here', async () => {
    const created = await call('POST', '/quickreply/edit', { shortCut: 'pix', type: 'text', text: 'Nossa chave pix é o CNPJ.', onWhatsApp: true });
    const onPhone = (await phoneReplies()).find((reply) => reply.shortcut === 'pix')!;
    await phoneSaves(onPhone.id, 'pix', '', true);
    expect((await showAll()).find((reply) => reply.id === created.body.quickReply.id)).toMatchObject({
      onWhatsApp: false,
      message: { text: 'Nossa chave pix é o CNPJ.' },
    });
  });

  it('should show a reply kept in regular_low (an older client’s) and follow its edits and deletion there', async () => {
    await olderClientSaves('1700000080', 'antigo', 'Resposta de um WhatsApp antigo');
    const listed = await waitFor(showAll, (all) => all.some((reply) => reply.shortCut === 'antigo'), 15_000, 'the regular_low reply listed');
    const synced = listed.find((reply) => reply.shortCut === 'antigo')!;
    expect(synced).toMatchObject({ onWhatsApp: true, message: { kind: 'text', text: 'Resposta de um WhatsApp antigo' } });

    await olderClientSaves('1700000080', 'antigo', 'Resposta editada no antigo');
    expect((await showAll()).filter((reply) => reply.shortCut === 'antigo')).toEqual([
      expect.objectContaining({ id: synced.id, onWhatsApp: true, message: { kind: 'text', text: 'Resposta editada no antigo' } }),
    ]);
    await olderClientSaves('1700000080', 'antigo', '', true);
    expect((await showAll()).map((reply) => reply.shortCut)).not.toContain('antigo');
  });

  it('should write a reply made through the API as WA Web does (regular, quickReplyAction v2), and supersede a regular_low reply it edits', async () => {
    const created = await call('POST', '/quickreply/edit', { shortCut: 'web', type: 'text', text: 'Escrita como o WhatsApp Web.', onWhatsApp: true });
    expect(created.status).toBe(200);
    // WAWebQuickRepliesSync: collection regular, version 2, index ['quick_reply', <creation time in seconds>],
    // QuickReplyAction {shortcut, message, keywords (none), count 0, deleted false}; whatsmeow appstate keys.go lists quick_reply.
    const written = (await quickReplyMutations('regular')).filter((mutation) => mutation.action?.quickReplyAction?.shortcut === 'web');
    expect(written).toEqual([
      {
        index: ['quick_reply', expect.stringMatching(/^\d{10}$/)],
        apiVersion: 2,
        operation: 'set',
        action: expect.objectContaining({ quickReplyAction: { shortcut: 'web', message: 'Escrita como o WhatsApp Web.', count: 0, deleted: false } }),
        version: expect.any(Number),
      },
    ]);
    expect(Math.abs(Number((written[0].index as string[])[1]) - Date.now() / 1000)).toBeLessThan(120);
    expect((await quickReplyMutations('regular_low')).filter((mutation) => mutation.action?.quickReplyAction?.shortcut === 'web')).toEqual([]);

    // A reply an older client left in regular_low, edited and then deleted through the API: written where WA Web writes
    // (regular, same id), the later mutation wins over the regular_low one.
    await olderClientSaves('1700000090', 'legado', 'Texto legado');
    const legacy = (await waitFor(showAll, (all) => all.some((reply) => reply.shortCut === 'legado'), 15_000, 'the legacy reply listed')).find(
      (reply) => reply.shortCut === 'legado',
    )!;
    expect(await call('POST', '/quickreply/edit', { id: legacy.id, shortCut: 'legado', type: 'text', text: 'Texto novo' })).toMatchObject({ status: 200 });
    expect((await quickReplyMutations('regular')).filter((mutation) => (mutation.index as string[])[1] === '1700000090')).toEqual([
      expect.objectContaining({
        apiVersion: 2,
        action: expect.objectContaining({ quickReplyAction: expect.objectContaining({ message: 'Texto novo', deleted: false }) }),
      }),
    ]);
    expect((await showAll()).filter((reply) => reply.shortCut === 'legado')).toEqual([
      expect.objectContaining({ id: legacy.id, onWhatsApp: true, message: { kind: 'text', text: 'Texto novo' } }),
    ]);
    expect(await call('POST', '/quickreply/edit', { id: legacy.id, delete: true })).toMatchObject({ status: 200, body: { message: 'Quick reply deleted' } });
    expect((await showAll()).map((reply) => reply.shortCut)).not.toContain('legado');
  });

  it('should refuse onWhatsApp for what WhatsApp cannot keep, and without a session', async () => {
    expect(await call('POST', '/quickreply/edit', { shortCut: 'foto', type: 'image', file: 'https://example.com/a.jpg', onWhatsApp: true })).toEqual({
      status: 400,
      body: { error: 'onWhatsApp applies to text quick replies only: the WhatsApp Business app keeps text replies', code: 'validation_failed' },
    });
    expect(await call('POST', '/quickreply/edit', { shortCut: 'x'.repeat(26), type: 'text', text: 'oi', onWhatsApp: true })).toEqual({
      status: 400,
      body: { error: 'shortCut must be at most 25 characters to be on WhatsApp', code: 'validation_failed' },
    });
    expect((await call('POST', '/quickreply/edit', { shortCut: 'a', type: 'text', text: 'oi', onWhatsApp: 'yes' })).status).toBe(400);
    const idle = await stack.gw.createInstance('quick-idle');
    expect(await call('POST', '/quickreply/edit', { shortCut: 'oi', type: 'text', text: 'oi', onWhatsApp: true }, idle.token)).toEqual({
      status: 409,
      body: { error: 'failed to sync the quick reply with WhatsApp: No session', code: 'conflict' },
    });
    // Nothing was written, and listing works without a session.
    expect(await call('GET', '/quickreply/showall', undefined, idle.token)).toEqual({ status: 200, body: [] });
  });
});
