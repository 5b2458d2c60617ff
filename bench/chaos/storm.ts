/**
 * The reconnect storm (issue 34, mode 7): `--storm-instances` more instances on the same worker, all
 * connected; the server restarted (every socket closed at once, 3 s away), and again 5 s after it came
 * back, while the sessions are still reconnecting. Recovery: from the second restart's end to each
 * instance's first sync send answered 200 (each instance sends once it is `connected`, and again every
 * 2 s until one is answered 200).
 */
import type { ApiAnswer, ChaosSend } from '@gw/testing';
import { log, SETTLE_MS, sleep, STORM } from './options';

export async function stormPhase(
  addInstances: (count: number, prefix: string, label: string) => Promise<Array<{ id: string; token: string; phone: string }>>,
  allConnected: (ids: string[], timeoutMs: number) => Promise<boolean>,
  control: <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => Promise<T>,
  gateway: (method: 'GET' | 'POST', path: string, token: string, body?: unknown) => Promise<ApiAnswer>,
  query: <T>(sql: string, parameters?: unknown[]) => Promise<T[]>,
  base: Array<{ id: string; token: string; phone: string }>,
) {
  const stormStarted = Date.now();
  const added = await addInstances(STORM, '5537', 'storm');
  const all = [...base, ...added];
  if (
    !(await allConnected(
      all.map((i) => i.id),
      900_000,
    ))
  )
    log('storm: not every instance connected before the storm');
  log(`storm: ${all.length} instances connected in ${Math.round((Date.now() - stormStarted) / 1000)} s`);
  const peers = Array.from({ length: 10 }, (_, i) => `5538${String(i).padStart(8, '0')}`);
  for (const phone of peers) await control('POST', '/sim/accounts', { phone });
  await control('DELETE', '/sim/handshakes');
  await control('POST', '/sim/faults', { kind: 'restart', downMs: 3_000 });
  await sleep(5_000);
  await control('POST', '/sim/faults', { kind: 'restart', downMs: 3_000 });
  const endedAt = Date.now();
  const sends: ChaosSend[] = [];
  const recoveryMs = new Map<string, number>();
  const deadline = endedAt + 300_000;
  let seq = 0;
  await Promise.all(
    all.map(async (instance, index) => {
      const peer = peers[index % peers.length];
      while (Date.now() < deadline) {
        const [row] = await query<{ status: string }>(`SELECT status FROM instances WHERE id = $1`, [instance.id]);
        if (row?.status === 'connected') {
          const text = `chaos storm ${instance.id} sync ${++seq}`;
          const startedAt = Date.now();
          const answer = await gateway('POST', '/send/text', instance.token, { number: peer, text }).catch((error: unknown) => ({
            status: 0,
            body: { error: String(error) },
          }));
          sends.push({
            mode: 'storm',
            instance: instance.id,
            kind: 'sync',
            to: peer,
            newChat: false,
            text,
            status: answer.status,
            startedAt,
            endedAt: Date.now(),
            ...(answer.status === 200 ? {} : { error: String(answer.body?.error ?? '').slice(0, 120) }),
          });
          if (answer.status === 200) {
            recoveryMs.set(instance.id, Date.now() - endedAt);
            return;
          }
        }
        await sleep(2_000);
      }
      recoveryMs.set(instance.id, NaN);
    }),
  );
  const { peak } = await control<{ peak?: number }>('GET', '/sim/handshakes');
  const [{ n }] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM instances WHERE id = ANY($1::text[]) AND status = 'connected'`, [
    all.map((i) => i.id),
  ]);
  const { settleChaos } = await import('@gw/testing');
  await settleChaos(query, { sends, inbound: [] }, SETTLE_MS);
  return { instances: all.length, connectedAfter: n, handshakePeak: peak ?? null, sends, recoveryMs, peers };
}
