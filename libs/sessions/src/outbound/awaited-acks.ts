/**
 * Message ids whose server ack a send in progress records itself (with its result), per socket. The
 * inbound handler leaves those acks alone: one write per ack, and no race between two writers of the
 * same status. An id leaves the set once the send has written its result, or gave up waiting.
 */
const awaited = new WeakMap<object, Set<string>>();

/**
 * Error acks a waiting send took as its outcome, per socket and id, not yet seen by the inbound side.
 * Baileys announces every error ack as a Failed status (`messages.update`), but its event buffer may
 * hold that announcement past the send's own result — or merge it into the message's buffered upsert —
 * while the send has resent the message (a 475 from a cap that is over) or written why it failed. Each
 * such status is the send's: the inbound side takes one claim for it instead of failing the message.
 */
const refusals = new WeakMap<object, Map<string, { count: number; until: number }>>();
/** A claim nobody took within this time is dropped (an announcement Baileys merged with another). */
const REFUSAL_CLAIM_MS = 60_000;
const REFUSAL_CLAIM_LIMIT = 1_000;

export const AwaitedAcks = {
  add(socket: object, messageId: string): void {
    let ids = awaited.get(socket);
    if (!ids) awaited.set(socket, (ids = new Set()));
    ids.add(messageId);
  },
  delete(socket: object, messageId: string): void {
    awaited.get(socket)?.delete(messageId);
  },
  has(socket: object, messageId: string): boolean {
    return awaited.get(socket)?.has(messageId) ?? false;
  },
  /** A waiting send took this error ack as its outcome (before Baileys announces it). */
  claimRefusal(socket: object, messageId: string, now = Date.now()): void {
    let claims = refusals.get(socket);
    if (!claims) refusals.set(socket, (claims = new Map()));
    const claim = claims.get(messageId);
    if (claim && claim.until > now) {
      claim.count++;
      claim.until = now + REFUSAL_CLAIM_MS;
      return;
    }
    if (claims.size >= REFUSAL_CLAIM_LIMIT) {
      for (const [id, old] of claims) if (old.until <= now) claims.delete(id);
      if (claims.size >= REFUSAL_CLAIM_LIMIT) claims.delete(claims.keys().next().value as string);
    }
    claims.set(messageId, { count: 1, until: now + REFUSAL_CLAIM_MS });
  },
  /**
   * A later status of the message (a phone's receipt) reached the inbound side: the claims of its id
   * go, as no Failed announcement of an earlier refusal can follow (Baileys' event buffer merged it into
   * this one, the later status winning), and a refusal after this one is not the send's.
   */
  dropRefusals(socket: object, messageId: string): void {
    refusals.get(socket)?.delete(messageId);
  },
  /**
   * Whether a Failed status Baileys announced for this id is an error ack a send took (and takes one
   * claim): the send records its outcome, so the inbound side must not fail the message with it.
   */
  takeRefusal(socket: object, messageId: string, now = Date.now()): boolean {
    const claims = refusals.get(socket);
    const claim = claims?.get(messageId);
    if (!claims || !claim) return false;
    if (claim.until <= now || --claim.count <= 0) claims.delete(messageId);
    return claim.until > now;
  },
};
