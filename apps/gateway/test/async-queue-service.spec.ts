import { InProcessBus } from '@gw/bus';
import type { SendRequest } from '@gw/contracts';
import { InstanceRepository, SendQueueRepository } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { randomBytes } from 'node:crypto';
import { toRequestInstance } from '../src/common/request-instance';
import { AsyncQueueService } from '../src/message/async/async-queue.service';

describe(AsyncQueueService.name, () => {
  let db: TestDatabase;
  const bus = new InProcessBus();

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await bus.close();
    await db?.close();
  });

  const request = (instanceId: string, recordId: string): SendRequest => ({
    instanceId,
    recordId,
    messageId: `3EB0${randomBytes(9).toString('hex').toUpperCase()}`,
    chatJid: '5511999990000@s.whatsapp.net',
    content: { kind: 'text', text: 'oi', linkPreview: null },
    delayMs: 0,
    record: { sendFunction: 'SendTextMessage', sendPayload: { number: '5511999990000', text: 'oi' }, trackSource: '', trackId: '', sendFolderId: '' },
  });

  it('should give an accept a fresh record id when its id is already taken in the instance', async () => {
    const id = `i${randomBytes(6).toString('hex')}`;
    const instance = toRequestInstance(await new InstanceRepository(db.dataSource).create({ id, token: `t${id}`, name: id }));
    const sut = new AsyncQueueService(new SendQueueRepository(db.dataSource), bus);

    const first = await sut.enqueue(instance, request(id, 'rsame01'));
    const second = await sut.enqueue(instance, request(id, 'rsame01'));

    expect(first.id).toBe('rsame01');
    expect(second.id).toMatch(/^r[0-9a-f]{7}$/);
    expect(second.id).not.toBe('rsame01');
    const rows: Array<{ n: number }> = await db.dataSource.query(`SELECT count(*)::int AS n FROM send_queue WHERE instance_id = $1`, [id]);
    expect(rows[0].n).toBe(2);
  });
});
