import { ASYNC_DISPATCHER_DEFAULTS, AsyncDispatcher, CAMPAIGN_SCHEDULER_DEFAULTS, CampaignScheduler } from '@gw/dispatch';
import { CampaignRepository, ChatRepository, InstanceRepository, LeaseRepository, SendLimitRepository, SendQueueRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { arrivals, CHAOS_MODES, chaosPlan, runChaosPhase, settleChaos, tallyChaos, type ChaosInstance, type ChaosTraffic } from '@gw/testing';
import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * Issue 34, the chaos run's short version (the whole one is `npm run bench -- chaos`): two instances
 * with traffic both ways — sync and async sends, a campaign each, messages their peers send them —
 * while the simulator plays the modes that settle fast, one after the other and then all at once.
 * Counted at the phones and in `messages`: every accepted send delivered once or Failed with a
 * reason, none stuck, every inbound message stored, every instance sending again after each fault.
 * (How fast is the bench's to measure, not this test's.)
 */
describe('chaos: traffic both ways through the failure modes (issue 34)', () => {
  const stack = new Stack();
  let dispatcher: AsyncDispatcher;
  let campaigns: CampaignScheduler;
  const instances: ChaosInstance[] = [];
  let traffic: ChaosTraffic;
  const modes = CHAOS_MODES.filter((mode) => ['restart', 'ack-lost', 'ack-error', 'stream-error-515', 'conflict'].includes(mode.name));
  const query = <T>(sql: string, parameters?: unknown[]) => stack.db.dataSource.query(sql, parameters) as Promise<T[]>;
  const connectedIds = async () =>
    (await query<{ id: string }>(`SELECT id FROM instances WHERE id = ANY($1::text[]) AND status = 'connected'`, [instances.map((i) => i.id)])).length;

  beforeAll(async () => {
    await stack.start({ RATE_LIMIT_INSTANCE: '1000000/s' }, undefined, {
      sendAckTimeoutMs: 3_000,
      unackedResendAfterMs: 4_000,
      unackedGiveUpMs: 20_000,
      unackedSweepMs: 500,
    });
    for (let n = 0; n < 2; n++) {
      const { id, token, phone } = await stack.connectedInstance(`chaos-${n}`);
      const [{ jid }] = await stack.control<Array<{ jid: string }>>('GET', `/sim/devices?phone=${phone}`);
      const peer = nextPhone('5543');
      await stack.control('POST', '/sim/accounts', { phone: peer, name: `Peer ${n}` });
      instances.push({ id, token, phone, device: jid, peer });
    }
    dispatcher = new AsyncDispatcher(
      new SendQueueRepository(stack.db.dataSource),
      new InstanceRepository(stack.db.dataSource),
      new ChatRepository(stack.db.dataSource),
      stack.bus,
      { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'e2e-chaos', pollIntervalMs: 200, disconnectedRetryMs: 500 },
      createLogger('dispatcher', 'silent'),
      new LeaseRepository(stack.db.dataSource),
      new SendLimitRepository(stack.db.dataSource),
    );
    dispatcher.start();
    campaigns = new CampaignScheduler(
      new CampaignRepository(stack.db.dataSource),
      stack.bus,
      { ...CAMPAIGN_SCHEDULER_DEFAULTS, pollIntervalMs: 200 },
      createLogger('campaigns', 'silent'),
    );
    campaigns.start();
    // A chat each way with its peer before the faults: the sends go to chats the instances have.
    for (const instance of instances) {
      expect((await stack.gw.call('POST', '/send/text', { token: instance.token, body: { number: instance.peer, text: 'oi' } })).status).toBe(200);
      await stack.control('POST', `/sim/accounts/${instance.peer}/send`, { to: instance.phone, text: 'olá' });
    }
    traffic = {
      control: (method, path, body) => stack.control(method, path, body),
      controlUrl: stack.sim.controlUrl,
      gateway: (method, path, token, body) => stack.gw.call(method, path, { token, body }),
      newContact: async () => {
        const phone = nextPhone('5544');
        await stack.control('POST', '/sim/accounts', { phone });
        return phone;
      },
      reconnect: async (instance) => {
        await stack.gw.call('POST', '/instance/connect', { token: instance.token, body: {} });
      },
      intervalMs: 500,
      campaignSize: 1,
      recoveryTimeoutMs: 30_000,
      sends: [],
      inbound: [],
    };
  }, 180_000);

  afterAll(async () => {
    await campaigns?.stop();
    await dispatcher?.stop();
    await stack.stop();
  });

  it('should deliver every accepted send once or fail it with a reason, store every inbound message and recover, mode by mode and all at once', async () => {
    const plan = chaosPlan(modes, instances);
    const phases = [...plan.sequential.map((step) => ({ name: step.mode.name, steps: [step] })), { name: 'all-at-once', steps: plan.allAtOnce }];
    const runs = new Map<string, Map<string, number>>();
    for (const phase of phases) {
      const ran = await runChaosPhase(traffic, instances, phase.steps, phase.name);
      const recoveryMs = new Map<string, number>();
      for (const run of ran) for (const [instance, ms] of run.recoveryMs) recoveryMs.set(`${run.mode} ${instance}`, ms);
      runs.set(phase.name, recoveryMs);
      await settleChaos(query, traffic, 25_000);
      await stack.control('DELETE', '/sim/faults');
      await waitFor(connectedIds, (n) => n === instances.length, 30_000, 'every instance connected again');
    }
    const counts = await arrivals(
      traffic.control,
      traffic.sends.map((send) => send.to),
    );
    const outcomes: Record<string, unknown> = {};
    for (const phase of phases) {
      const mine = { sends: traffic.sends.filter((s) => s.mode === phase.name), inbound: traffic.inbound.filter((m) => m.mode === phase.name) };
      const tally = await tallyChaos(query, counts, mine, { recoveryMs: runs.get(phase.name) as Map<string, number> });
      if (tally.lost > 0) {
        // What a lost send's row says (a rare loss seen once in a clean-clone CI, 2026-12-03, not reproduced): for the next reader.
        const missing = mine.sends.filter((send) => send.status === 200 && !(counts.get(send.text) ?? 0));
        const rows = await query<{ text: string }>(
          `SELECT text, status, error, relayed_at IS NOT NULL AS relayed, created_at, updated_at FROM messages WHERE text = ANY($1::text[])`,
          [missing.map((send) => send.text)],
        );
        process.stdout.write(
          `chaos ${phase.name}: lost ${JSON.stringify(missing.map((send) => ({ ...send, rows: rows.filter((row) => row.text === send.text) })))}\n`,
        );
      }
      outcomes[phase.name] = {
        sent: tally.accepted > 0 && tally.inbound.sent > 0,
        lost: tally.lost,
        duplicated: tally.duplicated,
        stuck: tally.stuck,
        failedButDelivered: tally.failedButDelivered,
        refusedButDelivered: tally.refusedButDelivered,
        inboundAccountedPercent: tally.inbound.accountedPercent,
        unrecovered: tally.recovery.instances - tally.recovery.recovered,
      };
    }
    const expected = {
      sent: true,
      lost: 0,
      duplicated: 0,
      stuck: 0,
      failedButDelivered: 0,
      refusedButDelivered: {},
      inboundAccountedPercent: 100,
      unrecovered: 0,
    };
    expect(outcomes).toEqual(Object.fromEntries(phases.map((phase) => [phase.name, expected])));
  }, 240_000);
});
