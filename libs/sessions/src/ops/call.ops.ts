import { randomBytes } from 'node:crypto';
import { ErrorCode, RpcError } from '@gw/contracts';
import { encodeSignedDeviceIdentity } from '@whiskeysockets/baileys';
import type { BinaryNode, WASocket } from '../baileys';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { Session } from '../session/session';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { socketHandlerOf } from './socket-handler';

/** The ops of the gateway's `call/` area. */
export type CallOps = 'call.offer' | 'call.reject';

const USER_JID = /^\d{5,20}@s\.whatsapp\.net$/;
const CALLER_JID = /^\d{5,20}(:\d+)?@(s\.whatsapp\.net|lid)$/;
const CALL_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** The longest a placed call is kept ringing by the instance (WhatsApp gives up on its own after about a minute). */
export const MAX_CALL_SECONDS = 600;

export const callRequests = {
  'call.offer': (raw, instanceId) => {
    const jid = typeof raw.jid === 'string' ? raw.jid : '';
    if (!USER_JID.test(jid)) throw new RpcError(ErrorCode.BadRequest, 'invalid number JID');
    const duration = raw.durationSeconds ?? 0;
    if (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 0 || duration > MAX_CALL_SECONDS)
      throw new RpcError(ErrorCode.BadRequest, 'invalid call_duration');
    return { instanceId, jid, video: raw.video === true, durationSeconds: duration };
  },
  'call.reject': (raw, instanceId) => {
    const callId = typeof raw.callId === 'string' ? raw.callId : '';
    const from = typeof raw.from === 'string' ? raw.from : '';
    if (!CALL_ID.test(callId)) throw new RpcError(ErrorCode.BadRequest, 'invalid call id');
    if (!CALLER_JID.test(from)) throw new RpcError(ErrorCode.BadRequest, 'invalid number');
    return { instanceId, callId, from };
  },
} satisfies OpRequestParsers<CallOps>;

const RING_MEDIA = (video: boolean): BinaryNode[] => [
  { tag: 'audio', attrs: { enc: 'opus', rate: '16000' } },
  { tag: 'audio', attrs: { enc: 'opus', rate: '8000' } },
  ...(video
    ? [{ tag: 'video', attrs: { orientation: '0', screen_width: '1920', screen_height: '1080', device_orientation: '0', enc: 'vp8', dec: 'vp8' } }]
    : []),
  { tag: 'net', attrs: { medium: '3' } },
  { tag: 'capability', attrs: { ver: '1' }, content: new Uint8Array([1, 4, 255, 131, 207, 4]) },
  { tag: 'encopt', attrs: { keygen: '2' } },
];

/**
 * A call offer as WhatsApp Web places one (rc14 has no call for it): the codecs, then a fresh 32-byte
 * call key Signal-encrypted (`Message.call.callKey`) for each of the callee's devices under
 * `<destination>`. The callee's phone rings; no media ever flows (uazapi's /call/make only rings).
 */
async function placeCall(socket: WASocket, jid: string, video: boolean): Promise<string> {
  const me = socket.authState.creds.me;
  if (!me) throw new RpcError(ErrorCode.NotConnected, 'instance is not connected');
  const callId = randomBytes(16).toString('hex').toUpperCase();
  const devices = (await socket.getUSyncDevices([jid], true, false)).map((device) => device.jid);
  if (!devices.length) throw new RpcError(ErrorCode.NotFound, 'the number is not on WhatsApp');
  await socket.assertSessions(devices, false);
  const { nodes, shouldIncludeDeviceIdentity } = await socket.createParticipantNodes(devices, { call: { callKey: randomBytes(32) } }, { count: '0' });
  const offer: BinaryNode[] = [...RING_MEDIA(video), { tag: 'destination', attrs: {}, content: nodes }];
  if (shouldIncludeDeviceIdentity && socket.authState.creds.account)
    offer.push({ tag: 'device-identity', attrs: {}, content: encodeSignedDeviceIdentity(socket.authState.creds.account, true) });
  await socket.query({
    tag: 'call',
    attrs: { to: jid, id: socket.generateMessageTag() },
    content: [{ tag: 'offer', attrs: { 'call-id': callId, 'call-creator': me.id.replace(/:\d+@/, '@') }, content: offer }],
  });
  return callId;
}

/** Hangs up a call the instance placed (best effort: the socket may be gone by then, and WhatsApp times the offer out anyway). */
function hangUpLater(session: Session, jid: string, callId: string, seconds: number): void {
  const timer = setTimeout(() => {
    try {
      const socket = session.openSocket();
      const creator = (socket.authState.creds.me?.id ?? '').replace(/:\d+@/, '@');
      void socket
        .query({
          tag: 'call',
          attrs: { to: jid, id: socket.generateMessageTag() },
          content: [{ tag: 'terminate', attrs: { 'call-id': callId, 'call-creator': creator } }],
        })
        .catch(() => undefined);
    } catch {
      // The session ended: nothing to hang up from.
    }
  }, seconds * 1000);
  timer.unref?.();
}

/** Placing a call (it rings only) and rejecting an incoming one; the stored call follows the rejection at once. */
export function callOps(inbound: InboundMessageObserver): OpHandlers<CallOps> {
  return {
    'call.offer': async (session, request) => {
      const socket = session.openSocket();
      const callId = await placeCall(socket, request.jid, request.video).catch((error: unknown) => {
        if (error instanceof RpcError) throw error;
        throw new RpcError(ErrorCode.Refused, `error making call: ${(error as Error)?.message ?? String(error)}`);
      });
      if (request.durationSeconds > 0) hangUpLater(session, request.jid, callId, request.durationSeconds);
      return { callId };
    },
    'call.reject': async (session, request) => {
      const socket = session.openSocket();
      const handler = socketHandlerOf(inbound, session);
      await socket.rejectCall(request.callId, request.from).catch((error: unknown) => {
        throw new RpcError(ErrorCode.Refused, `error rejecting call: ${(error as Error)?.message ?? String(error)}`);
      });
      // WhatsApp does not echo the device's own rejection back: the stored call (and its `call` event) says it now.
      await handler.callChanged({ id: request.callId, from: request.from, chatId: request.from, status: 'reject', date: new Date(), offline: false });
      return { ok: true };
    },
  };
}
