import { ErrorCode, RpcError, type ContactCheckResult } from '@gw/contracts';
import type { proto } from '../baileys';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { patchAppState } from './socket-handler';

/** The ops of the gateway's `contact/` area (and `/chat/check`): the phone's address book and who is on WhatsApp. */
export type ContactOps = 'contact.add' | 'contact.remove' | 'contact.check';

const PN_JID = /^\d{8,15}@s\.whatsapp\.net$/;
const MAX_NAME = 256;
const MAX_CHECK = 500;

function pnJidOf(raw: Record<string, unknown>): string {
  const jid = typeof raw.jid === 'string' ? raw.jid : '';
  if (!PN_JID.test(jid)) throw new RpcError(ErrorCode.BadRequest, 'jid must be a phone-number JID');
  return jid;
}

export const contactRequests = {
  'contact.add': (raw, instanceId) => {
    const name = typeof raw.name === 'string' ? raw.name.trim() : '';
    if (!name || name.length > MAX_NAME) throw new RpcError(ErrorCode.BadRequest, 'name is required');
    return { instanceId, jid: pnJidOf(raw), name };
  },
  'contact.remove': (raw, instanceId) => ({ instanceId, jid: pnJidOf(raw) }),
  'contact.check': (raw, instanceId) => {
    const jids = raw.jids;
    if (!Array.isArray(jids) || jids.length > MAX_CHECK || !jids.every((jid): jid is string => typeof jid === 'string' && PN_JID.test(jid)))
      throw new RpcError(ErrorCode.BadRequest, 'jids must be phone-number JIDs');
    return { instanceId, jids };
  },
} satisfies OpRequestParsers<ContactOps>;

/**
 * The `contactAction` of a saved contact as WhatsApp Web writes it: the name, saved on the phone's address book,
 * with the number's JID (`pnJid`) and, when WhatsApp has told it, its LID (`lidJid`), which WA Web reads to show
 * the saved name in LID-addressed chats (the 2023 bundle's 664221.js; WAHA added it for the same reason, #2285).
 */
export function contactActionOf(jid: string, name: string, lid: string | null | undefined): proto.SyncActionValue.IContactAction {
  return {
    fullName: name,
    firstName: name,
    saveOnPrimaryAddressbook: true,
    pnJid: jid,
    ...(lid ? { lidJid: lid.replace(/:\d+@/, '@') } : {}),
  };
}

/**
 * Address book changes are app-state `contactAction` patches (Baileys' addOrEditContact / removeContact,
 * collection critical_unblock_low), as the phone makes them; the contacts event follows once stored.
 */
export function contactOps(inbound: InboundMessageObserver): OpHandlers<ContactOps> {
  return {
    'contact.add': async (session, request) => {
      const socket = session.openSocket();
      const lid = await socket.signalRepository.lidMapping.getLIDForPN(request.jid).catch(() => null);
      return patchAppState(inbound, session, async (handler) => {
        await socket.addOrEditContact(request.jid, contactActionOf(request.jid, request.name, lid));
        await handler.addressBookChanged(request.jid, request.name);
      });
    },
    'contact.remove': async (session, request) => {
      const socket = session.openSocket();
      return patchAppState(inbound, session, async (handler) => {
        await socket.removeContact(request.jid);
        await handler.addressBookChanged(request.jid, null);
      });
    },
    'contact.check': async (session, request) => {
      const socket = session.openSocket();
      if (!request.jids.length) return { results: [] };
      const found = (await socket.onWhatsApp(...request.jids)) ?? [];
      const exists = new Set(found.filter((entry) => entry.exists).map((entry) => entry.jid));
      const onWhatsApp = request.jids.filter((jid) => exists.has(jid));
      const lids = onWhatsApp.length ? ((await socket.signalRepository.lidMapping.getLIDsForPNs(onWhatsApp)) ?? []) : [];
      const lidOf = new Map(lids.map((pair) => [pair.pn.replace(/:\d+@/, '@'), pair.lid.replace(/:\d+@/, '@')]));
      const results: ContactCheckResult[] = request.jids.map((jid) => ({
        query: jid,
        exists: exists.has(jid),
        jid: exists.has(jid) ? jid : '',
        lid: lidOf.get(jid) ?? '',
      }));
      return { results };
    },
  };
}
