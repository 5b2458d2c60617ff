import { NestFactory } from '@nestjs/core';
import { InProcessBus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { PersistenceModule } from '@gw/persistence';
import { Module } from '@nestjs/common';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import pino from 'pino';
import { sessionWorkerConfig } from '../src/config/session-worker.config';
import { SESSION_WORKER, SessionWorkerModule } from '../src/session-worker.module';
import type { SessionWorker } from '../src/session-worker';

describe(SessionWorkerModule.name, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.close());

  it('should start the worker with the application and stop it gracefully on close', async () => {
    const bus = new InProcessBus();
    const config = sessionWorkerConfig({ workerId: 'w-nest' });
    // As an embedder does: the repositories come from PersistenceModule, registered once.
    @Module({
      imports: [
        PersistenceModule.forDataSource(db.dataSource),
        SessionWorkerModule.register({ dataSource: db.dataSource, bus, config, logger: pino({ level: 'silent' }) }),
      ],
    })
    class EmbedderModule {}
    const app = await NestFactory.createApplicationContext(EmbedderModule, { logger: false });
    const worker = app.get<SessionWorker>(SESSION_WORKER);
    expect(worker.workerId).toBe('w-nest');
    expect(await db.dataSource.query(`SELECT id FROM session_workers WHERE id = 'w-nest'`)).toEqual([{ id: 'w-nest' }]);
    // the placement subject is served (an unknown instance is refused, not unanswered)
    await expect(
      bus.request(
        Subjects.place,
        { instanceId: 'nope', connect: { instanceId: 'nope', browser: 'auto', history: { days: 1, fullSync: false }, requestId: 'x' } },
        { timeoutMs: 5_000 },
      ),
    ).rejects.toMatchObject({ code: 'not_found' });

    await app.close();
    expect(await db.dataSource.query(`SELECT id FROM session_workers WHERE id = 'w-nest'`)).toEqual([]);
    await expect(bus.request(Subjects.place, {}, { timeoutMs: 1_000 })).rejects.toMatchObject({ code: 'no_session' });
    await bus.close();
  });
});
