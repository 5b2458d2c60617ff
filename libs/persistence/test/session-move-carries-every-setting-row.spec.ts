import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, LeaseRepository, SessionMoveRepository, type SessionSnapshot } from '@gw/persistence';

/**
 * A session exported from one database and imported into another (two schemas): the credentials and
 * every settings row (webhook and sink, Chatwoot, chatbot records with their knowledge chunks, the
 * followers' cursors) arrive as they were; a live lease refuses the export and changes nothing; a refused
 * import writes nothing.
 */
describe(SessionMoveRepository.name, () => {
  let source: TestDatabase;
  let target: TestDatabase;

  beforeAll(async () => {
    [source, target] = await Promise.all([openTestDatabase(), openTestDatabase()]);
  });
  afterAll(async () => {
    await new LeaseRepository(source.dataSource).closeRenewal();
    await Promise.all([source.close(), target.close()]);
  });

  const q = (db: TestDatabase, sql: string, params: unknown[] = []) => db.dataSource.query(sql, params);
  const seal = async (snapshot: SessionSnapshot) => structuredClone(snapshot);

  async function linkedInstance(id: string): Promise<void> {
    await new InstanceRepository(source.dataSource).create({
      id,
      token: `token-${id}`,
      name: 'loja',
      paired: true,
      jid: `5511${id.length}999:7@s.whatsapp.net`,
      owner: '5511999',
      chatbotEnabled: true,
      msgDelayMin: 3,
      msgDelayMax: 9,
      proxy: {
        mode: 'internal',
        proxyUrl: null,
        proxyFallback: null,
        managed: { country: 'br', proxyUrl: 'http://u:p@10.0.0.1:3128' },
        lastTestAt: null,
        lastTestError: null,
      },
    });
    await q(source, `INSERT INTO auth_creds (instance_id, value) VALUES ($1, '{"me":{"id":"x"}}')`, [id]);
    await q(
      source,
      `INSERT INTO auth_keys (instance_id, type, key_id, value) VALUES ($1, 'session', 'a.0', '{"s":1}'), ($1, 'app-state-sync-key', 'k', '{"k":2}')`,
      [id],
    );
    await q(
      source,
      `INSERT INTO webhooks (id, instance_id, url, events, secret, kind, options) VALUES
         ($1 || '-w', $1, 'https://hooks.example/a', '{messages}', 'whsec_a', 'webhook', '{}'),
         ($1 || '-s', $1, 'amqp://u:p@broker.example:5672', '{}', 'whsec_s', 'rabbitmq', '{"exchange":"wa"}')`,
      [id],
    );
    await q(
      source,
      `INSERT INTO chatwoot_configs (instance_id, enabled, url, access_token, account_id, inbox_id, webhook_secret)
       VALUES ($1, true, 'https://cw.example', 'cw-token', 9007199254740993, 7, 'cw-secret')`,
      [id],
    );
    await q(source, `INSERT INTO chatbot_records (id, instance_id, kind, data) VALUES ($1 || '-k', $1, 'knowledge', '{"title":"FAQ"}')`, [id]);
    await q(
      source,
      `INSERT INTO chatbot_knowledge_chunks (knowledge_id, ord, instance_id, text, embedding) VALUES ($1 || '-k', 0, $1, 'Abrimos às 9h', '{0.5,-0.25}')`,
      [id],
    );
  }

  it('should carry the credentials and every settings row, and leave a tombstone without credentials', async () => {
    await linkedInstance('move-a');
    const exported = await new SessionMoveRepository(source.dataSource).exportSession('move-a', 'exported', seal);
    if (exported.outcome !== 'sealed') throw new Error(exported.outcome);
    expect(exported.entity).toMatchObject({ paired: false, desiredState: 'disconnected', lastDisconnectReason: 'exported' });
    expect(exported.entity.exportedAt).toBeInstanceOf(Date);
    expect(await q(source, `SELECT count(*)::int AS n FROM auth_keys WHERE instance_id = 'move-a'`)).toEqual([{ n: 0 }]);
    expect(await q(source, `SELECT count(*)::int AS n FROM auth_creds WHERE instance_id = 'move-a'`)).toEqual([{ n: 0 }]);
    expect(exported.sealed.settings.proxy).not.toHaveProperty('managed');
    // Once is all: the tombstone exports nothing.
    expect((await new SessionMoveRepository(source.dataSource).exportSession('move-a', 'exported', seal)).outcome).toBe('exported');

    const sut = new SessionMoveRepository(target.dataSource);
    const imported = await sut.importSession({ id: 'moved-a', token: 'new-token', snapshot: exported.sealed, reason: 'imported' });
    if (imported.outcome !== 'imported') throw new Error(imported.outcome);
    expect(imported.entity).toMatchObject({
      paired: true,
      jid: exported.sealed.device.jid,
      msgDelayMin: 3,
      msgDelayMax: 9,
      chatbotEnabled: true,
      token: 'new-token',
    });
    expect(imported.entity.proxy).toMatchObject({ mode: 'internal', managed: null });
    expect(await q(target, `SELECT value FROM auth_creds WHERE instance_id = 'moved-a'`)).toEqual([{ value: '{"me":{"id":"x"}}' }]);
    expect(await q(target, `SELECT type, key_id, value FROM auth_keys WHERE instance_id = 'moved-a' ORDER BY type`)).toEqual([
      { type: 'app-state-sync-key', key_id: 'k', value: '{"k":2}' },
      { type: 'session', key_id: 'a.0', value: '{"s":1}' },
    ]);
    expect(await q(target, `SELECT url, events, secret, kind, options FROM webhooks WHERE instance_id = 'moved-a' ORDER BY kind DESC`)).toEqual([
      { url: 'https://hooks.example/a', events: ['messages'], secret: 'whsec_a', kind: 'webhook', options: {} },
      { url: 'amqp://u:p@broker.example:5672', events: [], secret: 'whsec_s', kind: 'rabbitmq', options: { exchange: 'wa' } },
    ]);
    expect(await q(target, `SELECT enabled, access_token, account_id, inbox_id, webhook_secret FROM chatwoot_configs WHERE instance_id = 'moved-a'`)).toEqual([
      { enabled: true, access_token: 'cw-token', account_id: '9007199254740993', inbox_id: '7', webhook_secret: 'cw-secret' },
    ]);
    expect(await q(target, `SELECT id, kind, data FROM chatbot_records WHERE instance_id = 'moved-a'`)).toEqual([
      { id: 'move-a-k', kind: 'knowledge', data: { title: 'FAQ' } },
    ]);
    expect(await q(target, `SELECT text, embedding FROM chatbot_knowledge_chunks WHERE instance_id = 'moved-a'`)).toEqual([
      { text: 'Abrimos às 9h', embedding: [0.5, -0.25] },
    ]);
    expect(await q(target, `SELECT consumer FROM outbox_cursors WHERE instance_id = 'moved-a' ORDER BY consumer`)).toEqual([
      { consumer: 'chatbot' },
      { consumer: 'chatwoot' },
    ]);

    // The same device again: refused, nothing added.
    const before = await q(target, `SELECT (SELECT count(*) FROM instances)::int AS i, (SELECT count(*) FROM auth_keys)::int AS k`);
    expect(await sut.importSession({ id: 'moved-b', token: 'other-token', snapshot: exported.sealed, reason: 'imported' })).toEqual({
      outcome: 'duplicate',
      instanceId: 'moved-a',
    });
    expect(await q(target, `SELECT (SELECT count(*) FROM instances)::int AS i, (SELECT count(*) FROM auth_keys)::int AS k`)).toEqual(before);
  });

  it('should refuse a session a worker still holds, changing nothing', async () => {
    await linkedInstance('move-held');
    expect(await new LeaseRepository(source.dataSource).claim('move-held', 'w1', 30_000)).toBeTruthy();
    const sealed = jest.fn(seal);
    expect(await new SessionMoveRepository(source.dataSource).exportSession('move-held', 'exported', sealed)).toEqual({ outcome: 'held' });
    expect(sealed).not.toHaveBeenCalled();
    expect(await q(source, `SELECT count(*)::int AS n FROM auth_keys WHERE instance_id = 'move-held'`)).toEqual([{ n: 2 }]);
    expect(await q(source, `SELECT paired, exported_at FROM instances WHERE id = 'move-held'`)).toEqual([{ paired: true, exported_at: null }]);
  });

  it('should write nothing when sealing fails, and nothing when the last settings row is refused', async () => {
    await linkedInstance('move-seal');
    const failing = async () => {
      throw new Error('seal failed');
    };
    await expect(new SessionMoveRepository(source.dataSource).exportSession('move-seal', 'exported', failing)).rejects.toThrow('seal failed');
    expect(await q(source, `SELECT count(*)::int AS n FROM auth_keys WHERE instance_id = 'move-seal'`)).toEqual([{ n: 2 }]);

    const exported = await new SessionMoveRepository(source.dataSource).exportSession('move-seal', 'exported', seal);
    if (exported.outcome !== 'sealed') throw new Error(exported.outcome);
    const snapshot = structuredClone(exported.sealed);
    snapshot.knowledgeChunks[0].embedding = 'not numbers';
    const counts = `SELECT (SELECT count(*) FROM instances)::int AS i, (SELECT count(*) FROM auth_creds)::int AS c, (SELECT count(*) FROM webhooks)::int AS w, (SELECT count(*) FROM chatbot_records)::int AS r`;
    const before = await q(target, counts);
    const refused = await new SessionMoveRepository(target.dataSource).importSession({ id: 'moved-seal', token: 't-seal', snapshot, reason: 'imported' });
    expect(refused.outcome).toBe('invalid');
    expect(await q(target, counts)).toEqual(before);
  });
});
