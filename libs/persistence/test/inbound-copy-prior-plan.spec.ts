import { genericPlan, newMessageFixture, openTestDatabase, type TestDatabase } from '@gw/testing';
import { InboundGroupRepository, InstanceRepository, type InboundGroupWrites } from '@gw/persistence';

/**
 * A round's copies (InboundGroupRepository.write) read the status our own messages had before the
 * upsert (`c_prior`), to tell whether a copy moved a send forward. The statement goes out prepared and
 * Postgres keeps its generic plan for the connection's life, made from the table as it was then. On an
 * empty `messages` table (a new deployment, a bench's schema) that plan joined the keys with a scan of
 * the whole table, every round: bench/inbound, 4,000 messages received by one instance, 129 rounds read
 * 4.9 million buffers, 17.7 ms each.
 */
describe("a round's copies read prior statuses only of our own messages, each by its key", () => {
  let db: TestDatabase;
  const instanceId = 'rcopyprior';
  const chat = '5511900000077@s.whatsapp.net';

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-copy-prior', name: 'c' });
  });
  afterAll(() => db.close());

  /** The statement of one round with copies, as the worker sends it, its parameters, and the round's results. */
  const recordedRound = async (writes: InboundGroupWrites) => {
    const sent: Array<[string, unknown[]]> = [];
    const written = await db.dataSource.transaction(async (manager) => {
      const query = manager.query.bind(manager);
      jest.spyOn(manager, 'query').mockImplementation((sql: string, parameters?: Parameters<typeof query>[1]) => {
        sent.push([sql, (parameters ?? []) as unknown[]]);
        return query(sql, parameters);
      });
      return new InboundGroupRepository(db.dataSource).within(manager).write(writes);
    });
    const round = sent.find(([sql]) => sql.includes('c_prior AS'));
    if (!round) throw new Error('no round statement with copies was sent');
    return { sql: round[0], parameters: round[1], written };
  };

  it('should look up no prior status for received messages', async () => {
    const received = [1, 2, 3].map((k) => newMessageFixture(instanceId, { id: `id-R${k}`, messageId: `R${k}`, chatId: chat, fromMe: false }));
    const { parameters, written } = await recordedRound({ copies: received });
    expect(parameters.slice(0, 2)).toEqual([[], []]);
    expect(written.copies.map((copy) => copy?.created)).toEqual([true, true, true]);
  });

  it("should read our own messages' prior statuses one by one by their key, never by scanning messages, in the generic plan made on an empty table", async () => {
    const ours = [1, 2].map((k) => newMessageFixture(instanceId, { id: `id-O${k}`, messageId: `O${k}`, chatId: chat, fromMe: true, status: 'Sent' }));
    const { sql, parameters } = await recordedRound({ copies: ours });
    expect(parameters.slice(0, 2)).toEqual([
      [instanceId, instanceId],
      ['O1', 'O2'],
    ]);
    const plan = await genericPlan(db.dataSource, sql, parameters);
    expect(plan).not.toMatch(/Seq Scan on messages m\b/);
    // Each key's lookup stops at its row (LIMIT 1 in a loop over the keys), whatever index it takes.
    expect(plan).toMatch(/Nested Loop[\s\S]*Function Scan on k[\s\S]*Limit[\s\S]*Index (Only )?Scan using \w+ on messages m\b/);
  });

  it('should tell whether our copy moved the send it reserved forward, and never for a received message', async () => {
    const reserved = newMessageFixture(instanceId, { id: 'id-Q1', messageId: 'Q1', chatId: chat, fromMe: true, status: 'Pending', raw: null });
    await recordedRound({ copies: [reserved] });
    const { written } = await recordedRound({
      copies: [
        { ...reserved, status: 'Delivered', raw: '{"copy":1}' },
        newMessageFixture(instanceId, { id: 'id-Q2', messageId: 'Q2', chatId: chat, fromMe: false, status: 'Delivered' }),
      ],
    });
    expect(written.copies[0]).toMatchObject({ created: false, advanced: true, row: { messageId: 'Q1', status: 'Delivered' } });
    expect(written.copies[1]).toMatchObject({ created: true, advanced: false, row: { messageId: 'Q2' } });
  });
});
