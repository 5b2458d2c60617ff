import type { SendLimit, SendLimitRepository } from '@gw/persistence';
import { type BinaryNode, buildMergedTcTokenIndexWrite, getBinaryNodeChild, jidNormalizedUser, resolveTcTokenJid, type WASocket } from '../baileys';
import type { SocketContext, SocketObserver } from '../session/socket-observer';

/**
 * WhatsApp's limits on starting new chats, as the worker learns them:
 * - the reach-out timelock: a 1:1 send to someone the account never talked to is refused with error
 *   463 while it lasts (Baileys 7.0.0-rc14 SERVER_ERROR_CODES.MessageAccountRestriction; B#2441);
 * - the new-chat message cap: over the cycle's quota, such a send is refused with error 475.
 * Either is recorded per instance in Postgres (SendLimitRepository) with its end, from the server's
 * answer to its query (after an error ack) or from its notification; dispatchers hold the queued sends
 * that would open a new chat until then. Sends to existing chats are not limited.
 */
export const REACHOUT_TIMELOCK_ERROR = '463';
export const NEW_CHAT_CAP_ERROR = '475';

/** WA Web takes a lock without an end as one minute long (Baileys rc14 handleReachoutTimelockNotification). */
const TIMELOCK_DEFAULT_MS = 60_000;

/** What a send refused by a limit answers, and its record's error: the limit and its end. */
export function limitText(limit: SendLimit): string {
  const until = limit.until.toISOString();
  return limit.kind === 'reachout_timelock'
    ? `WhatsApp refused the message (error 463: reach-out timelock${limit.detail ? ` ${limit.detail}` : ''}): this account may not start new chats until ${until}; chats it already has are not limited`
    : `WhatsApp refused the message (error 475: new-chat message cap${limit.detail ? ` of ${limit.detail} used` : ''}): this account may not start more new chats until its cycle ends at ${until}; chats it already has are not limited`;
}

/** WhatsApp's capping info shows room in the cycle: not CAPPED, and fewer new chats used than its quota. */
function capHasRoom(info: { capping_status?: string; used_quota?: number; total_quota?: number }): boolean {
  const used = Number(info.used_quota);
  const total = Number(info.total_quota);
  return String(info.capping_status ?? '').toUpperCase() !== 'CAPPED' && Number.isFinite(used) && Number.isFinite(total) && used < total;
}

/**
 * After an error ack 475: whether the cap that refused the message is over already — WhatsApp's capping
 * info now shows room (a new cycle began, or the cap was replaced by a larger one, between the refusal
 * and the query). The message, refused and never routed, may then go again at once with its id; holding
 * it (and with it every send to a new chat) until the NEW cycle's end would wait for a limit that is not
 * there (bench/chaos `new-chat-cap`: "475 … 0/1000 used", held for the hour of the new cycle).
 */
export async function refusedByEndedCap(socket: Pick<WASocket, 'fetchNewChatMessageCap'>, code: string | undefined): Promise<boolean> {
  if (code !== NEW_CHAT_CAP_ERROR) return false;
  const info = await socket.fetchNewChatMessageCap().catch(() => null);
  return info ? capHasRoom(info) : false;
}

/**
 * After an error ack 463 or 475: asks WhatsApp whether the account is timelocked or capped, and records
 * the limit it reports. Null when none is (a 463 for a missing privacy token, or an unanswered query):
 * the refusal is then an ordinary one.
 */
export async function limitOfRefusal(
  socket: Pick<WASocket, 'fetchAccountReachoutTimelock' | 'fetchNewChatMessageCap'>,
  instanceId: string,
  code: string | undefined,
  limits: SendLimitRepository,
): Promise<SendLimit | null> {
  let limit: SendLimit | null = null;
  if (code === REACHOUT_TIMELOCK_ERROR) {
    const state = await socket.fetchAccountReachoutTimelock().catch(() => null);
    if (state?.isActive)
      limit = {
        kind: 'reachout_timelock',
        until: state.timeEnforcementEnds ?? new Date(Date.now() + TIMELOCK_DEFAULT_MS),
        detail: String(state.enforcementType ?? ''),
      };
  } else if (code === NEW_CHAT_CAP_ERROR) {
    const info = await socket.fetchNewChatMessageCap().catch(() => null);
    const cycleEnd = Number(info?.cycle_end_timestamp) * 1000;
    // A cycle with room is no limit (the cap that refused the message is over): nothing is held for it.
    if (info && cycleEnd > Date.now() && !capHasRoom(info))
      limit = { kind: 'new_chat_cap', until: new Date(cycleEnd), detail: `${info.used_quota ?? '?'}/${info.total_quota ?? '?'}` };
  }
  if (limit) await limits.record(instanceId, limit);
  return limit;
}

/**
 * Keeps send_limits as WhatsApp announces it: the reach-out timelock notification (Baileys emits it as
 * `connection.update` `reachoutTimeLock`, also after its own query) and the new-chat capping
 * notification (`message-capping.update`): a lock or a CAPPED cycle is recorded with its end, a lifted
 * lock or an uncapped cycle lifts the limit at once (the held sends go). And it stores the privacy token
 * (tctoken) WhatsApp attaches to an incoming 1:1 message, which rc14 drops (B#2752): with it, our reply
 * carries the contact's token as WhatsApp Web's does (WAWebSetTcTokenChatAction.handleIncomingTcToken).
 */
export class SendLimitObserver implements SocketObserver {
  constructor(private readonly limits: SendLimitRepository) {}

  attach({ instanceId, socket, logger }: SocketContext): () => void {
    const failed = (what: string) => (error: unknown) => logger.warn({ err: error }, `${what} failed`);
    const onUpdate = (update: { reachoutTimeLock?: { isActive?: boolean; timeEnforcementEnds?: Date; enforcementType?: string } }) => {
      const lock = update.reachoutTimeLock;
      if (!lock) return;
      const until = lock.timeEnforcementEnds;
      const write =
        lock.isActive && until && until.getTime() > Date.now()
          ? this.limits.record(instanceId, { kind: 'reachout_timelock', until, detail: String(lock.enforcementType ?? '') })
          : this.limits.lift(instanceId, 'reachout_timelock');
      write.catch(failed('recording the reach-out timelock'));
    };
    const onCapping = (info: { capping_status?: string; cycle_end_timestamp?: string; used_quota?: number; total_quota?: number }) => {
      const cycleEnd = Number(info.cycle_end_timestamp) * 1000;
      const capped =
        String(info.capping_status ?? '').toUpperCase() === 'CAPPED' ||
        (typeof info.used_quota === 'number' && typeof info.total_quota === 'number' && info.total_quota >= 0 && info.used_quota >= info.total_quota);
      const write =
        capped && cycleEnd > Date.now()
          ? this.limits.record(instanceId, { kind: 'new_chat_cap', until: new Date(cycleEnd), detail: `${info.used_quota ?? '?'}/${info.total_quota ?? '?'}` })
          : this.limits.lift(instanceId, 'new_chat_cap');
      write.catch(failed('recording the new-chat cap'));
    };
    const onMessage = (node: BinaryNode) => void storeIncomingTcToken(socket, node).catch(failed('storing an incoming privacy token'));
    socket.ev.on('connection.update', onUpdate);
    socket.ev.on('message-capping.update', onCapping);
    socket.ws.on('CB:message', onMessage);
    return () => {
      socket.ev.off('connection.update', onUpdate);
      socket.ev.off('message-capping.update', onCapping);
      socket.ws.off('CB:message', onMessage);
    };
  }
}

/**
 * The `<tctoken t="…">` child of an incoming `<message>` from a user, stored under the sender's LID
 * (its `sender_lid`, else its JID resolved) unless a newer one is stored: the shape of Baileys PR #2752's
 * storeTcTokenFromMessageNode. Its timestamp keeps it valid for the 28-day window the send path checks.
 */
export async function storeIncomingTcToken(socket: Pick<WASocket, 'authState' | 'signalRepository'>, node: BinaryNode): Promise<string | undefined> {
  const token = getBinaryNodeChild(node, 'tctoken');
  const t = Number(token?.attrs.t);
  if (!token || !(token.content instanceof Uint8Array) || !t || !node.attrs.from) return undefined;
  const from = jidNormalizedUser(node.attrs.from);
  if (!from.endsWith('@s.whatsapp.net') && !from.endsWith('@lid')) return undefined;
  const keys = socket.authState.keys;
  const senderLid = node.attrs.sender_lid?.endsWith('@lid') ? jidNormalizedUser(node.attrs.sender_lid) : undefined;
  const storageJid = senderLid ?? (await resolveTcTokenJid(from, (pn: string) => socket.signalRepository.lidMapping.getLIDForPN(pn)));
  const current = (await keys.get('tctoken', [storageJid]))[storageJid];
  if (current?.timestamp && Number(current.timestamp) > t) return undefined;
  // The index Baileys prunes expired tokens by (issued-tc-tokens.ts writes it the same way).
  const index = await buildMergedTcTokenIndexWrite(keys, [storageJid]);
  await keys.set({ tctoken: { [storageJid]: { ...current, token: Buffer.from(token.content), timestamp: String(t) }, ...index } });
  return storageJid;
}
