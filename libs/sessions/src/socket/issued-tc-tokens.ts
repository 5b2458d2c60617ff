import {
  buildMergedTcTokenIndexWrite,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  jidNormalizedUser,
  resolveTcTokenJid,
  storeTcTokensFromIqResult,
  type BinaryNode,
  type WASocket,
} from '../baileys';
import type { SocketContext, SocketObserver } from '../session/socket-observer';

/**
 * Stores the privacy tokens (tctokens) our sends issue to a contact, which Baileys 7.0.0-rc14 means to
 * store and loses.
 *
 * After a 1:1 send Baileys issues our token to the contact (an `<iq xmlns="privacy"><tokens>` set) unless
 * it already did in the current 7-day bucket, and then stores the token the server answers and the
 * `senderTimestamp` that tells the next send it was issued. That continuation runs fire-and-forget
 * inside the AsyncLocalStorage context of the send's Signal key transaction, which has committed by
 * then: its writes go into that finished transaction's buffer and never reach the key store. So every
 * send to a contact issued the token again: one more IQ round trip to WhatsApp per message (WhatsApp
 * Web issues once a week per contact), and a third of a millisecond of the worker's CPU in bench/send.
 *
 * This observer sees the IQ's answer on the socket (outside any transaction) and writes what that
 * continuation would have: the token through Baileys' own helper, under the contact's LID when it is
 * known, `senderTimestamp`, and the tctoken index. If a later Baileys stores them itself, this writes
 * the same values once more.
 */
export class IssuedTcTokenObserver implements SocketObserver {
  attach({ socket, logger }: SocketContext): () => void {
    const onTokens = (node: BinaryNode) => {
      if (node.attrs.type !== 'result') return;
      storeIssuedTokens(socket, node, Math.floor(Date.now() / 1000)).catch((error: unknown) =>
        logger.warn({ err: error }, 'storing an issued privacy token failed (the next send issues it again)'),
      );
    };
    socket.ws.on('CB:iq,,tokens', onTokens);
    return () => socket.ws.off('CB:iq,,tokens', onTokens);
  }
}

/** The writes of the lost continuation, for each token of an issuance's answer. */
export async function storeIssuedTokens(socket: Pick<WASocket, 'authState' | 'signalRepository'>, result: BinaryNode, now: number): Promise<void> {
  const keys = socket.authState.keys;
  const getLIDForPN = (pn: string) => socket.signalRepository.lidMapping.getLIDForPN(pn);
  for (const token of getBinaryNodeChildren(getBinaryNodeChild(result, 'tokens'), 'token')) {
    if (!token.attrs.jid) continue;
    const storageJid = await resolveTcTokenJid(jidNormalizedUser(token.attrs.jid), getLIDForPN);
    const one: BinaryNode = { tag: 'iq', attrs: {}, content: [{ tag: 'tokens', attrs: {}, content: [token] }] };
    await storeTcTokensFromIqResult({ result: one, fallbackJid: storageJid, keys, getLIDForPN });
    const current = (await keys.get('tctoken', [storageJid]))[storageJid];
    const index = await buildMergedTcTokenIndexWrite(keys, [storageJid]);
    const issuedAt = Number(token.attrs.t) || now;
    await keys.set({ tctoken: { [storageJid]: { ...current, token: current?.token ?? Buffer.alloc(0), senderTimestamp: issuedAt }, ...index } });
  }
}
