import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, QuickReplyRepository } from '@gw/persistence';

/**
 * The API writes a reply to the phone first, then stores it: a sync reading the phone in between takes
 * the reply in as the phone's. The API's record must still be stored, once, as the API's.
 */
describe('a quick reply the API wrote to the phone and a sync took in meanwhile', () => {
  let db: TestDatabase;
  let replies: QuickReplyRepository;
  const instanceId = 'rqrsync';
  const text = (value: string) => ({ kind: 'text', text: value });
  const rowsOf = (waId: string) =>
    db.dataSource.query(`SELECT id, origin, short_cut, on_whatsapp FROM quick_replies WHERE instance_id = $1 AND wa_id = $2`, [instanceId, waId]) as Promise<
      Array<{ id: string; origin: string; short_cut: string; on_whatsapp: boolean }>
    >;

  beforeAll(async () => {
    db = await openTestDatabase();
    replies = new QuickReplyRepository(db.dataSource, null);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-qrsync', name: 'q' });
  });
  afterAll(() => db.close());

  it('should store a created reply as the API’s, replacing the synced copy', async () => {
    await replies.syncFromWhatsApp(instanceId, [{ waId: '1700000100', shortCut: 'oi', text: 'Olá' }]);
    expect(await rowsOf('1700000100')).toEqual([expect.objectContaining({ origin: 'whatsapp' })]);
    const created = await replies.create(instanceId, { shortCut: 'oi', aiDescription: '', message: text('Olá'), waId: '1700000100' }, null, 1_000);
    expect(created).toMatchObject({ origin: 'api', waId: '1700000100', onWhatsApp: true });
    expect(await rowsOf('1700000100')).toEqual([expect.objectContaining({ id: (created as { id: string }).id, origin: 'api' })]);
  });

  it('should let an updated reply put back on WhatsApp take its new id over from a synced copy', async () => {
    const made = (await replies.create(instanceId, { shortCut: 'tchau', aiDescription: '', message: text('Até logo') }, null, 1_000)) as { id: string };
    await replies.syncFromWhatsApp(instanceId, [
      { waId: '1700000100', shortCut: 'oi', text: 'Olá' },
      { waId: '1700000200', shortCut: 'tchau', text: 'Até logo' },
    ]);
    const updated = await replies.update(
      instanceId,
      made.id,
      { shortCut: 'tchau', aiDescription: '', message: text('Até logo'), waId: '1700000200' },
      { action: 'none' },
      1_000,
    );
    expect(updated).toMatchObject({ id: made.id, origin: 'api', waId: '1700000200', onWhatsApp: true });
    expect(await rowsOf('1700000200')).toEqual([expect.objectContaining({ id: made.id, origin: 'api' })]);
  });

  it('should leave the API’s own replies alone', async () => {
    const other = await replies.create(instanceId, { shortCut: 'x', aiDescription: '', message: text('x'), waId: '1700000300' }, null, 1_000);
    expect(other).toMatchObject({ origin: 'api' });
    await expect(replies.create(instanceId, { shortCut: 'y', aiDescription: '', message: text('y'), waId: '1700000300' }, null, 1_000)).rejects.toThrow();
    expect(await rowsOf('1700000300')).toHaveLength(1);
  });
});
