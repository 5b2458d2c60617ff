import { genericPlan, openTestDatabase, type TestDatabase } from '@gw/testing';
import { ContactRepository, InstanceRepository, LidMappingRepository } from '@gw/persistence';

describe('a contact seen by LID and later by phone number is one contact', () => {
  let db: TestDatabase;
  const instanceId = 'rcontacttest';
  const observe = (observation: Parameters<ContactRepository['observe']>[1]) =>
    db.dataSource.transaction((manager) => new ContactRepository(db.dataSource).within(manager).observe(instanceId, observation));
  /** observe(), answering also the statements it ran and the advisory locks its transaction then held. */
  const observeCounted = (observation: Parameters<ContactRepository['observe']>[1]) =>
    db.dataSource.transaction(async (manager) => {
      const statements: string[] = [];
      const counting = new Proxy(manager, {
        get: (target, key, receiver) =>
          key === 'query'
            ? (text: string, params?: unknown[]) => {
                statements.push(text);
                return target.query(text, params);
              }
            : Reflect.get(target, key, receiver),
      });
      const seen = await new ContactRepository(db.dataSource).within(counting).observe(instanceId, observation);
      const [{ locks }]: Array<{ locks: number }> = await manager.query(
        `SELECT count(*)::int AS locks FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`,
      );
      return { ...seen, statements, locks };
    });
  const rowsOf = async (...jids: string[]) =>
    (await db.dataSource.query(`SELECT jid, lid, push_name FROM contacts WHERE instance_id = $1 AND (jid = ANY($2) OR lid = ANY($2)) ORDER BY jid`, [
      instanceId,
      jids,
    ])) as Array<{ jid: string; lid: string; push_name: string }>;

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-contact', name: 'c' });
  });
  afterAll(() => db.close());

  it('should key a contact by its LID until the number is known, then move it to the number', async () => {
    const first = await observe({ lid: '333@lid', pushName: 'Carla' });
    expect(first).toMatchObject({ changed: true, contact: { jid: '333@lid', lid: '333@lid', pushName: 'Carla' } });
    const second = await observe({ jid: '5511900000003@s.whatsapp.net', lid: '333@lid', contactName: 'Carla (agenda)' });
    expect(second).toMatchObject({
      changed: true,
      contact: { jid: '5511900000003@s.whatsapp.net', lid: '333@lid', pushName: 'Carla', contactName: 'Carla (agenda)' },
    });
    const rows = await db.dataSource.query(`SELECT jid FROM contacts WHERE instance_id = $1`, [instanceId]);
    expect(rows).toEqual([{ jid: '5511900000003@s.whatsapp.net' }]);
    expect(await new ContactRepository(db.dataSource).find(instanceId, '333@lid')).toMatchObject({ jid: '5511900000003@s.whatsapp.net' });
  });

  it('should report no change when nothing new is said', async () => {
    const again = await observe({ lid: '333@lid', pushName: 'Carla' });
    expect(again.changed).toBe(false);
    const renamed = await observe({ lid: '333@lid', pushName: 'Carla S.' });
    expect(renamed).toMatchObject({ changed: true, contact: { jid: '5511900000003@s.whatsapp.net', pushName: 'Carla S.' } });
  });

  describe('an observation the row already holds (the check without the lock)', () => {
    const pn = '5511900000010@s.whatsapp.net';
    const lid = '1010@lid';

    it('should answer an unchanged observation in one statement, without a write', async () => {
      await observe({ jid: pn, lid, pushName: 'Dora', verifiedName: 'Dora Ltda' });
      // The row's version (xmin) and all its columns: any write, even of the same values, changes xmin.
      const stored = () => db.dataSource.query(`SELECT xmin::text AS version, * FROM contacts WHERE instance_id = $1 AND jid = $2`, [instanceId, pn]);
      const before = await stored();
      for (const observation of [
        { jid: pn, lid, pushName: 'Dora' },
        { jid: pn },
        { lid, pushName: 'Dora', verifiedName: 'Dora Ltda' },
        { jid: pn, inAddressBook: false },
      ]) {
        const seen = await observeCounted(observation);
        expect(seen).toMatchObject({ changed: false, contact: { jid: pn, lid, pushName: 'Dora', verifiedName: 'Dora Ltda' } });
        expect(seen).toMatchObject({ statements: [expect.any(String)], locks: 0 });
      }
      expect(await stored()).toEqual(before);
    });

    it("should look an observed contact up by its key or its LID in the check's generic plan, not by reading the instance's contacts", async () => {
      await db.dataSource.query(
        `INSERT INTO contacts (instance_id, jid, lid) SELECT $1, '55319' || g || '@s.whatsapp.net', CASE WHEN g % 2 = 0 THEN '8' || g || '@lid' ELSE '' END
         FROM generate_series(1, 3000) g`,
        [instanceId],
      );
      await db.dataSource.query(`ANALYZE contacts`);
      const seen = await observeCounted({ jid: pn, lid, pushName: 'Dora' });
      const parameters = [instanceId, pn, lid, '', 'Dora', '', null];
      for (const given of [parameters, [instanceId, pn, '', '', 'Dora', '', null]]) {
        const text = await genericPlan(db.dataSource, seen.statements[0], given);
        expect(text).toMatch(/contacts_lid/);
        expect(text).not.toMatch(/Seq Scan on contacts/);
        expect(text).not.toMatch(/Index Cond: \(instance_id = [^()]*\)$/m);
      }
    });

    it('should write, under the lock, what the row does not hold yet, in as many statements as before the check', async () => {
      for (const [observation, expected] of [
        [{ jid: pn, lid, pushName: 'Dora M.' }, { pushName: 'Dora M.' }],
        [{ jid: pn, inAddressBook: true }, { inAddressBook: true }],
        [{ jid: pn, contactName: 'Dora (agenda)' }, { contactName: 'Dora (agenda)' }],
        [{ jid: pn, lid: '1011@lid' }, { lid: '1011@lid' }],
      ] as const) {
        const seen = await observeCounted(observation);
        expect(seen).toMatchObject({ changed: true, contact: { jid: pn, ...expected }, locks: 1 });
        // The check that took the lock, the read after it, the write (before: the lock, the read, the write).
        expect(seen.statements).toHaveLength(3);
        expect(seen.statements[2]).toContain('INSERT INTO contacts');
      }
    });

    it('should move a row known by its LID to the phone number when both are seen, as before', async () => {
      const lidOnly = '1020@lid';
      const phone = '5511900000020@s.whatsapp.net';
      await observe({ lid: lidOnly, pushName: 'Enzo' });
      expect(await observeCounted({ lid: lidOnly, pushName: 'Enzo' })).toMatchObject({ changed: false, statements: [expect.any(String)], locks: 0 });
      const moved = await observeCounted({ jid: phone, lid: lidOnly, pushName: 'Enzo' });
      expect(moved).toMatchObject({ changed: true, contact: { jid: phone, lid: lidOnly, pushName: 'Enzo' }, locks: 1 });
      expect(moved.statements).toHaveLength(4);
      expect(moved.statements[2]).toMatch(/^DELETE FROM contacts/);
      expect(await rowsOf(phone, lidOnly)).toEqual([{ jid: phone, lid: lidOnly, push_name: 'Enzo' }]);
      expect(await observeCounted({ lid: lidOnly, pushName: 'Enzo' })).toMatchObject({
        changed: false,
        contact: { jid: phone },
        statements: [expect.any(String)],
        locks: 0,
      });
    });

    it('should merge two rows of one person even when one of them holds everything observed', async () => {
      const phone = '5511900000030@s.whatsapp.net';
      const lidKey = '1030@lid';
      // Two rows as an older version could leave them: the phone row already says it all.
      await db.dataSource.query(
        `INSERT INTO contacts (instance_id, jid, lid, push_name, contact_name) VALUES ($1, $2, $3, 'Fabi', ''), ($1, $3, $3, 'Fabi', 'Fabi (agenda)')`,
        [instanceId, phone, lidKey],
      );
      const seen = await observe({ jid: phone, lid: lidKey, pushName: 'Fabi' });
      expect(seen).toMatchObject({ changed: true, contact: { jid: phone, lid: lidKey, pushName: 'Fabi', contactName: 'Fabi (agenda)' } });
      expect(await rowsOf(phone, lidKey)).toEqual([{ jid: phone, lid: lidKey, push_name: 'Fabi' }]);
    });

    it('should not wait for a writer in flight when nothing changes, and decide a change on the row that writer left', async () => {
      const phone = '5511900000040@s.whatsapp.net';
      const lidKey = '1040@lid';
      await observe({ jid: phone, lid: lidKey, pushName: 'Gil' });
      const writer = db.dataSource.createQueryRunner();
      await writer.connect();
      await writer.startTransaction();
      const [{ pid: writerPid }]: Array<{ pid: number }> = await writer.query(`SELECT pg_backend_pid() AS pid`);
      try {
        // A rename in flight: it holds the instance's contacts lock and the row until it commits.
        expect(await new ContactRepository(db.dataSource).within(writer.manager).observe(instanceId, { jid: phone, pushName: 'Gil R.' })).toMatchObject({
          changed: true,
        });
        // Unchanged as far as the committed row says: answered without waiting for the writer, ordered before the rename.
        const unchanged = observe({ lid: lidKey, pushName: 'Gil' });
        let answered = false;
        const first = await Promise.race([
          unchanged.then((seen) => ((answered = true), seen)),
          waitForBlockedBy(writerPid, () => answered).then(() => 'blocked by the writer'),
        ]);
        expect(first).toMatchObject({ changed: false, contact: { jid: phone, pushName: 'Gil' } });
        // The same rename seen by a message meanwhile: not unchanged on the committed row, so it takes the lock.
        const waiting = observe({ lid: lidKey, pushName: 'Gil R.' });
        await waitForBlockedBy(writerPid);
        await writer.commitTransaction();
        // Decided on the row the writer committed: the change is reported once, by the writer.
        expect(await waiting).toMatchObject({ changed: false, contact: { jid: phone, pushName: 'Gil R.' } });
      } finally {
        if (writer.isTransactionActive) await writer.rollbackTransaction();
        await writer.release();
      }
      expect(await rowsOf(phone, lidKey)).toEqual([{ jid: phone, lid: lidKey, push_name: 'Gil R.' }]);
    });

    /** Until a session waits for the contacts lock `pid` holds (an observation above), or `stop()`. */
    async function waitForBlockedBy(pid: number, stop: () => boolean = () => false): Promise<void> {
      while (!stop()) {
        const [{ n }]: Array<{ n: number }> = await db.dataSource.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE '%pg_advisory_xact_lock%'`,
          [pid],
        );
        if (n > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  });

  it('should store LID pairs once and answer both ways', async () => {
    const store = (pairs: Array<{ lid: string; pn: string }>) =>
      db.dataSource.transaction((manager) => new LidMappingRepository(db.dataSource).within(manager).store(instanceId, pairs));
    expect(await store([{ lid: '444@lid', pn: '5511900000004@s.whatsapp.net' }])).toHaveLength(1);
    expect(await store([{ lid: '444@lid', pn: '5511900000004@s.whatsapp.net' }])).toHaveLength(0);
    expect(await store([{ lid: 'not-a-lid', pn: '5511900000004@s.whatsapp.net' }])).toHaveLength(0);
    const mappings = new LidMappingRepository(db.dataSource);
    expect(await mappings.pnForLid(instanceId, '444@lid')).toBe('5511900000004@s.whatsapp.net');
    expect(await mappings.lidForPn(instanceId, '5511900000004@s.whatsapp.net')).toBe('444@lid');
  });
});
