import { ASYNC_DISPATCHER_DEFAULTS, AsyncDispatcher, CAMPAIGN_SCHEDULER_DEFAULTS, CampaignScheduler } from '@gw/dispatch';
import { CampaignRepository, ChatRepository, InstanceRepository, SendQueueRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { nextPhone, Stack, waitFor } from './support/stack';

/** Campaigns through the whole stack: /sender/simple → scheduler → async queue → dispatcher → worker → phones. */
describe('campaigns (/sender/*)', () => {
  const stack = new Stack();
  let dispatcher: AsyncDispatcher;
  let campaigns: CampaignScheduler;
  let token: string;
  const phones = [nextPhone('5542'), nextPhone('5542')];

  beforeAll(async () => {
    await stack.start();
    ({ token } = await stack.connectedInstance('campaign-sender'));
    for (const phone of phones) await stack.control('POST', '/sim/accounts', { phone, name: 'Cliente' });
    dispatcher = new AsyncDispatcher(
      new SendQueueRepository(stack.db.dataSource),
      new InstanceRepository(stack.db.dataSource),
      new ChatRepository(stack.db.dataSource),
      stack.bus,
      { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'e2e-sender', pollIntervalMs: 100 },
      createLogger('dispatcher', 'silent'),
    );
    dispatcher.start();
    campaigns = new CampaignScheduler(
      new CampaignRepository(stack.db.dataSource),
      stack.bus,
      { ...CAMPAIGN_SCHEDULER_DEFAULTS, pollIntervalMs: 100 },
      createLogger('campaigns', 'silent'),
    );
    campaigns.start();
  }, 60_000);

  afterAll(async () => {
    await campaigns?.stop();
    await dispatcher?.stop();
    await stack.stop();
  });

  it('should send a simple campaign to every number, then count and list its messages', async () => {
    const created = await stack.gw.call('POST', '/sender/simple', {
      token,
      body: { numbers: phones, type: 'text', text: 'Promoção!', folder: 'promo-1', delayMin: 0, delayMax: 0, scheduled_for: 0 },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ count: 2, status: 'queued' });
    const folderId = created.body.folder_id as string;

    for (const phone of phones) {
      await waitFor(
        () => stack.inbox(phone, 1_000),
        (entries) => entries.some((entry) => (entry.message.extendedTextMessage?.text ?? entry.message.conversation) === 'Promoção!'),
        15_000,
        `campaign message at ${phone}`,
      );
    }
    const folders = await waitFor(
      async () => (await stack.gw.call('GET', '/sender/listfolders', { token })).body as Array<Record<string, unknown>>,
      (list) => list.some((folder) => folder.id === folderId && folder.status === 'done'),
      10_000,
      'folder done',
    );
    expect(folders.find((folder) => folder.id === folderId)).toMatchObject({
      id: folderId,
      status: 'done',
      log_total: 2,
      log_sucess: 2,
      log_failed: 0,
      delayMin: 0,
      delayMax: 0,
    });
    expect((await stack.gw.call('GET', '/sender/listfolders?status=paused', { token })).body).toEqual([]);
    // The reference's filter values: a finished campaign is archived, not active.
    const archived = (await stack.gw.call('GET', '/sender/listfolders?status=Archived', { token })).body as Array<Record<string, unknown>>;
    expect(archived.map((folder) => folder.id)).toContain(folderId);
    const active = (await stack.gw.call('GET', '/sender/listfolders?status=Active', { token })).body as Array<Record<string, unknown>>;
    expect(active.map((folder) => folder.id)).not.toContain(folderId);

    const listed = await stack.gw.call('POST', '/sender/listmessages', { token, body: { folder_id: folderId, messageStatus: 'Sent' } });
    expect(listed.status).toBe(200);
    expect(listed.body.pagination).toEqual({ totalRecords: 2, limit: 1000, offset: 0 });
    expect(listed.body.messages).toHaveLength(2);
    expect(listed.body.messages[0]).toMatchObject({ send_folder_id: folderId, fromMe: true, text: 'Promoção!' });
    const paged = await stack.gw.call('POST', '/sender/listmessages', { token, body: { folder_id: folderId, page: 2, pageSize: 1 } });
    expect(paged.body.messages).toHaveLength(1);
    expect(paged.body.pagination).toMatchObject({ totalRecords: 2, page: 2, pageSize: 1 });

    const again = await stack.gw.call('POST', '/sender/simple', {
      token,
      body: { numbers: phones, type: 'text', text: 'de novo', folder: 'promo-1', delayMin: 0, delayMax: 0 },
    });
    expect(again.status).toBe(409);
  });

  it('should answer the messages the campaign routes answered when they checked their bodies by hand', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['/sender/simple', {}, 'numbers is required: a non-empty array of phone numbers'],
      ['/sender/simple', { numbers: [] }, 'numbers is required: a non-empty array of phone numbers'],
      ['/sender/simple', { numbers: 'x' }, 'numbers is required: a non-empty array of phone numbers'],
      ['/sender/simple', { numbers: Array(10_001).fill(phones[0]) }, 'numbers: at most 10000'],
      ['/sender/simple', { numbers: [7], type: 'text', text: 'x', delayMin: 0, delayMax: 0 }, 'numbers[0] must be a string'],
      ['/sender/simple', { numbers: phones }, 'numbers[0]: type is required'],
      ['/sender/simple', { numbers: phones, type: '' }, 'numbers[0]: type is required'],
      ['/sender/simple', { numbers: phones, type: 'fax', delayMin: 0, delayMax: 0 }, 'numbers[0]: type "fax" is not supported in campaigns'],
      ['/sender/simple', { numbers: phones, type: 'text', text: 'x', delayMin: 0 }, 'delayMax is required (seconds)'],
      ['/sender/simple', { numbers: phones, type: 'text', text: 'x', delayMin: '', delayMax: 0 }, 'delayMin is required (seconds)'],
      ['/sender/simple', { numbers: phones, type: 'text', text: 'x', delayMin: -1, delayMax: 0 }, 'delayMin must be a number of seconds between 0 and 86400'],
      [
        '/sender/simple',
        { numbers: phones, type: 'text', text: 'x', delayMin: 'soon', delayMax: 0 },
        'delayMin must be a number of seconds between 0 and 86400',
      ],
      [
        '/sender/simple',
        { numbers: phones, type: 'text', text: 'x', delayMin: 0, delayMax: 86_401 },
        'delayMax must be a number of seconds between 0 and 86400',
      ],
      ['/sender/simple', { numbers: phones, type: 'text', text: 'x', delayMin: 2, delayMax: '1' }, 'delayMax must be greater than or equal to delayMin'],
      ['/sender/simple', { numbers: phones, type: 'text', delayMin: 0, delayMax: 0 }, 'numbers[0]: text is required for type text'],
      [
        '/sender/simple',
        { numbers: phones, type: 'text', text: 'x', delayMin: 0, delayMax: 0, scheduled_for: -5 },
        'scheduled_for must be a timestamp in milliseconds or a number of minutes from now',
      ],
      ['/sender/simple', { numbers: phones, type: 'text', text: 'x', delayMin: 0, delayMax: 0, folder: 5 }, 'folder must be a string'],
      ['/sender/simple', { numbers: phones, type: 'text', text: 'x', delayMin: 0, delayMax: 0, info: [] }, 'info must be a string'],
      // Each message's content fields are checked by its /send/* endpoint's rules (found by the fuzzer: a 500 before).
      [
        '/sender/simple',
        { numbers: phones, type: 'text', text: 'see https://example.com', linkPreview: true, linkPreviewDescription: false, delayMin: 0, delayMax: 0 },
        'numbers[0]: linkPreviewDescription must be a string',
      ],
      [
        '/sender/simple',
        { numbers: phones, type: 'image', file: 'https://example.com/a.png', viewOnce: 'yes', delayMin: 0, delayMax: 0 },
        'numbers[0]: viewOnce must be a boolean',
      ],
      [
        '/sender/advanced',
        { messages: [{ number: phones[0], type: 'location', latitude: 'north', longitude: 0 }] },
        'messages[0]: missing required fields or invalid coordinates',
      ],
      ['/sender/advanced', {}, 'messages is required: a non-empty array'],
      ['/sender/advanced', { messages: [] }, 'messages is required: a non-empty array'],
      ['/sender/advanced', { messages: ['x'] }, 'messages[0] must be an object'],
      ['/sender/advanced', { messages: [{ number: phones[0] }] }, 'messages[0]: type is required'],
      [
        '/sender/advanced',
        { messages: [{ number: phones[0], type: 'text', text: 'x' }], delayMin: 86_401 },
        'delayMin must be a number of seconds between 0 and 86400',
      ],
      ['/sender/edit', {}, 'folder_id is required'],
      ['/sender/edit', { folder_id: '' }, 'folder_id is required'],
      ['/sender/edit', { folder_id: 'f1' }, 'action must be one of stop, continue, delete'],
      ['/sender/edit', { folder_id: 'f1', action: 'pause' }, 'action must be one of stop, continue, delete'],
      ['/sender/cleardone', { hours: -1 }, 'hours must be a non-negative number'],
      ['/sender/cleardone', { hours: 'x' }, 'hours must be a non-negative number'],
      ['/sender/listmessages', {}, 'folder_id is required'],
      ['/sender/listmessages', { folder_id: 7 }, 'folder_id is required'],
      ['/sender/listmessages', { folder_id: 'f1', messageStatus: 'Done' }, 'messageStatus must be one of Scheduled, Sent, Failed'],
      ['/sender/listmessages', { folder_id: 'f1', limit: 0 }, 'limit must be an integer between 1 and 1000'],
      ['/sender/listmessages', { folder_id: 'f1', limit: '1.5' }, 'limit must be an integer between 1 and 1000'],
      ['/sender/listmessages', { folder_id: 'f1', offset: -1 }, `offset must be an integer between 0 and ${Number.MAX_SAFE_INTEGER}`],
      ['/sender/listmessages', { folder_id: 'f1', page: 0 }, `page must be an integer between 1 and ${Number.MAX_SAFE_INTEGER}`],
      ['/sender/listmessages', { folder_id: 'f1', pageSize: 1001 }, 'pageSize must be an integer between 1 and 1000'],
    ];
    for (const [path, body, error] of cases) {
      const answer = await stack.gw.call('POST', path, { token, body });
      expect({ path, body: JSON.stringify(body).slice(0, 120), status: answer.status, error: String(answer.body.error).slice(0, error.length) }).toEqual({
        path,
        body: JSON.stringify(body).slice(0, 120),
        status: 400,
        error,
      });
    }
    // Numbers may come as numeric strings, as they always could.
    const listed = await stack.gw.call('POST', '/sender/listmessages', { token, body: { folder_id: 'nope', limit: '10', offset: '0', messageStatus: '' } });
    expect(listed).toEqual({ status: 200, body: { messages: [], pagination: { totalRecords: 0, limit: 10, offset: 0 } } });
  });

  it('should validate, stop, delete and clear campaigns', async () => {
    const bad = await stack.gw.call('POST', '/sender/simple', { token, body: { numbers: phones, type: 'text', text: 'x', delayMax: 1 } });
    expect(bad).toMatchObject({ status: 400, body: { error: expect.stringContaining('delayMin') } });
    const badType = await stack.gw.call('POST', '/sender/advanced', { token, body: { messages: [{ number: phones[0], type: 'text' }] } });
    expect(badType).toMatchObject({ status: 400, body: { error: expect.stringContaining('messages[0]') } });

    const later = await stack.gw.call('POST', '/sender/advanced', {
      token,
      body: {
        delayMin: 1,
        delayMax: 2,
        scheduled_for: 60,
        messages: [
          { number: phones[0], type: 'text', text: 'um' },
          { number: phones[1], type: 'location', latitude: -23.5, longitude: -46.6 },
        ],
      },
    });
    expect(later.body).toMatchObject({ count: 2, status: 'queued' });
    const folderId = later.body.folder_id;
    expect((await stack.gw.call('POST', '/sender/edit', { token, body: { folder_id: folderId, action: 'stop' } })).body).toEqual({ status: 'paused' });
    expect((await stack.gw.call('GET', '/sender/listfolders?status=paused', { token })).body).toEqual([
      expect.objectContaining({ id: folderId, log_total: 2 }),
    ]);
    expect((await stack.gw.call('GET', '/sender/listfolders?status=Active', { token })).body).toEqual([expect.objectContaining({ id: folderId })]);
    expect((await stack.gw.call('GET', '/sender/listfolders?status=Archived', { token })).body).not.toContainEqual(expect.objectContaining({ id: folderId }));
    expect((await stack.gw.call('GET', '/sender/listfolders?status=nope', { token })).body).toEqual({
      error: 'status must be one of Active, Archived, scheduled, sending, paused, done, deleting',
    });
    expect((await stack.gw.call('POST', '/sender/edit', { token, body: { folder_id: folderId, action: 'continue' } })).body).toMatchObject({
      status: 'scheduled',
    });
    const scheduled = await stack.gw.call('POST', '/sender/listmessages', { token, body: { folder_id: folderId, messageStatus: 'Scheduled' } });
    expect(scheduled.body.pagination.totalRecords).toBe(2);
    expect((await stack.gw.call('POST', '/sender/edit', { token, body: { folder_id: folderId, action: 'delete' } })).body).toMatchObject({
      status: 'deleting',
    });
    expect((await stack.gw.call('POST', '/sender/edit', { token, body: { folder_id: folderId, action: 'delete' } })).status).toBe(404);

    await stack.gw.call('POST', '/sender/simple', {
      token,
      body: { numbers: [phones[0]], type: 'text', text: 'depois', delayMin: 0, delayMax: 0, scheduled_for: 30 },
    });
    expect((await stack.gw.call('DELETE', '/sender/clearall', { token })).body).toEqual({ status: 'processed', messages_deleted: 1, folders_deleted: 2 });
    expect((await stack.gw.call('POST', '/sender/cleardone', { token, body: {} })).body).toEqual({ status: 'cleanup started' });
    expect((await stack.gw.call('GET', '/sender/listfolders', { token })).body).toEqual([]);
  });

  it('should send a campaign of menus (button, list, poll, carousel) built as /send/menu builds them', async () => {
    const interactiveOf = (message: Record<string, any>) => message.viewOnceMessage?.message?.interactiveMessage;
    const created = await stack.gw.call('POST', '/sender/advanced', {
      token,
      body: {
        delayMin: 0,
        delayMax: 0,
        folder: 'menus-1',
        info: 'every menu type',
        messages: [
          { number: phones[0], type: 'button', text: 'Quer?', footerText: 'loja', choices: ['Sim|yes-1', 'Site|https://example.com'] },
          { number: phones[1], type: 'list', text: 'Cardápio', listButton: 'Ver', choices: ['[Bebidas]', 'Café|c1|Quente', 'Chá|t1'] },
          { number: phones[0], type: 'poll', text: 'Melhor dia?', choices: ['Seg', 'Ter', 'Qua'], selectableCount: 2 },
          { number: phones[1], type: 'carousel', text: 'Ofertas', choices: ['[Camisa\nR$ 10]', 'Comprar|buy-1', '[Boné]', 'Site|https://example.com/bone'] },
        ],
      },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ count: 4, status: 'queued' });
    const folderId = created.body.folder_id as string;

    const find = async (phone: string, match: (message: Record<string, any>) => boolean, what: string) =>
      (
        await waitFor(
          () => stack.inbox(phone, 1_000),
          (entries) => entries.some((entry) => match(entry.message)),
          20_000,
          what,
        )
      ).find((entry) => match(entry.message))!.message;
    const button = await find(phones[0], (message) => interactiveOf(message)?.body?.text === 'Quer?', 'button menu');
    expect(interactiveOf(button)).toMatchObject({ footer: { text: 'loja' } });
    expect(interactiveOf(button).nativeFlowMessage.buttons.map((entry: { name: string }) => entry.name)).toEqual(['quick_reply', 'cta_url']);
    const list = await find(phones[1], (message) => message.listMessage?.description === 'Cardápio', 'list menu');
    expect(list.listMessage).toMatchObject({
      buttonText: 'Ver',
      sections: [
        {
          title: 'Bebidas',
          rows: [
            { title: 'Café', rowId: 'c1', description: 'Quente' },
            { title: 'Chá', rowId: 't1' },
          ],
        },
      ],
    });
    const poll = await find(phones[0], (message) => (message.pollCreationMessage ?? message.pollCreationMessageV3)?.name === 'Melhor dia?', 'poll');
    expect(poll.pollCreationMessage ?? poll.pollCreationMessageV3).toMatchObject({
      options: [{ optionName: 'Seg' }, { optionName: 'Ter' }, { optionName: 'Qua' }],
      selectableOptionsCount: 2,
    });
    const carousel = await find(phones[1], (message) => interactiveOf(message)?.body?.text === 'Ofertas', 'carousel');
    expect(interactiveOf(carousel).carouselMessage.cards.map((card: any) => card.body.text)).toEqual(['Camisa', 'Boné']);

    const done = await waitFor(
      async () => (await stack.gw.call('GET', '/sender/listfolders', { token })).body as Array<Record<string, unknown>>,
      (folders) => folders.some((folder) => folder.id === folderId && folder.status === 'done'),
      15_000,
      'menu folder done',
    );
    expect(done.find((folder) => folder.id === folderId)).toMatchObject({ info: 'every menu type', log_total: 4, log_sucess: 4, log_failed: 0 });
    const listed = await stack.gw.call('POST', '/sender/listmessages', { token, body: { folder_id: folderId } });
    expect(listed.body.messages.map((message: Record<string, unknown>) => message.sendFunction)).toEqual([
      'SendMenuMessage',
      'SendMenuMessage',
      'SendMenuMessage',
      'SendMenuMessage',
    ]);

    const bad = await stack.gw.call('POST', '/sender/advanced', {
      token,
      body: {
        messages: [
          { number: phones[0], type: 'text', text: 'ok' },
          { number: phones[0], type: 'poll', text: 'x', choices: ['only one'] },
        ],
      },
    });
    expect(bad).toEqual({ status: 400, body: { error: 'messages[1]: a poll needs at least 2 options' } });
    const badChoices = await stack.gw.call('POST', '/sender/simple', {
      token,
      body: { numbers: [phones[0]], type: 'list', text: 'x', choices: 'a,b', delayMin: 0, delayMax: 0 },
    });
    expect(badChoices).toEqual({ status: 400, body: { error: 'numbers[0]: choices must be an array of strings' } });
    // /send/menu's bounds hold in campaigns too.
    const tooMany = await stack.gw.call('POST', '/sender/advanced', {
      token,
      body: { messages: [{ number: phones[0], type: 'button', text: 'x', choices: Array.from({ length: 101 }, (_, n) => `b${n}`) }] },
    });
    expect(tooMany).toEqual({ status: 400, body: { error: 'messages[0]: choices: at most 100 entries' } });
    const badCount = await stack.gw.call('POST', '/sender/advanced', {
      token,
      body: { messages: [{ number: phones[0], type: 'poll', text: 'x', choices: ['a', 'b'], selectableCount: 'two' }] },
    });
    expect(badCount).toEqual({ status: 400, body: { error: 'messages[0]: selectableCount must be an integer' } });
    const unknown = await stack.gw.call('POST', '/sender/simple', {
      token,
      body: { numbers: [phones[0]], type: 'sticker-pack', text: 'x', delayMin: 0, delayMax: 0 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain('carousel');
  });
});
