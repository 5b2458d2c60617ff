import type { WASocket } from '@whiskeysockets/baileys';
import { KNOWN_RECIPIENT_TTL_MS, statusAudience } from './status-audience';

/** A socket whose onWhatsApp answers from `onWhatsApp` (a set of numbers) and records each query. */
function fakeSocket(onWhatsApp: Set<string>): { socket: WASocket; queries: string[][] } {
  const queries: string[][] = [];
  const socket = {
    onWhatsApp: async (...jids: string[]) => {
      queries.push(jids);
      return jids.map((jid) => ({ jid, exists: onWhatsApp.has(jid) }));
    },
  } as unknown as WASocket;
  return { socket, queries };
}

const A = '5511900000001@s.whatsapp.net';
const B = '5511900000002@s.whatsapp.net';
const C = '5511900000003@s.whatsapp.net';

describe('statusAudience', () => {
  it('asks WhatsApp once about an audience, then only about recipients it has not confirmed', async () => {
    const { socket, queries } = fakeSocket(new Set([A, B, C]));
    let clock = 1_000;
    const now = () => clock;
    expect(await statusAudience(socket, [A, B, A], now)).toEqual({ recipients: [A, B], discarded: [] });
    expect(queries).toEqual([[A, B]]);
    clock += 1_000;
    expect(await statusAudience(socket, [A, B], now)).toEqual({ recipients: [A, B], discarded: [] });
    expect(queries).toHaveLength(1);
    expect(await statusAudience(socket, [A, C], now)).toEqual({ recipients: [A, C], discarded: [] });
    expect(queries).toEqual([[A, B], [C]]);
  });

  it('asks again once a confirmation is older than its time to live', async () => {
    const { socket, queries } = fakeSocket(new Set([A]));
    let clock = 5_000;
    await statusAudience(socket, [A], () => clock);
    clock += KNOWN_RECIPIENT_TTL_MS - 1;
    await statusAudience(socket, [A], () => clock);
    expect(queries).toHaveLength(1);
    clock += 1;
    await statusAudience(socket, [A], () => clock);
    expect(queries).toHaveLength(2);
  });

  it('never remembers a recipient who is not on WhatsApp: the next status asks about them again', async () => {
    const onWhatsApp = new Set([A]);
    const { socket, queries } = fakeSocket(onWhatsApp);
    expect(await statusAudience(socket, [A, B])).toEqual({ recipients: [A], discarded: [{ input: B, reason: 'not_on_whatsapp' }] });
    onWhatsApp.add(B);
    expect(await statusAudience(socket, [A, B])).toEqual({ recipients: [A, B], discarded: [] });
    expect(queries).toEqual([[A, B], [B]]);
  });

  it('keeps each socket to its own answers', async () => {
    const first = fakeSocket(new Set([A]));
    const second = fakeSocket(new Set([A]));
    await statusAudience(first.socket, [A]);
    await statusAudience(second.socket, [A]);
    expect(first.queries).toHaveLength(1);
    expect(second.queries).toHaveLength(1);
  });

  it('refuses an audience with no one on WhatsApp, and an empty one', async () => {
    const { socket } = fakeSocket(new Set());
    await expect(statusAudience(socket, [B])).rejects.toThrow(/no valid recipients for the status: .* not on WhatsApp/);
    await expect(statusAudience(socket, [])).rejects.toThrow('no valid recipients for the status');
  });
});
