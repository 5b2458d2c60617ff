import type { LidMapping, LidMappingRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { jidNormalizedUser, type WASocket } from '../baileys';
import { answerWhileRead } from './answer-while-read';

/** A user as both of its identities: phone-number JID and LID (either '' when unknown). */
export interface Party {
  /** The JID as WhatsApp addressed it (without device). */
  jid: string;
  pn: string;
  lid: string;
}

const LOOKUP_TIMEOUT_MS = 2_000;
const CACHE_LIMIT = 1_000;
/**
 * A number whose LID neither our table nor Baileys (nor its usync) knew is not asked about again for this
 * long: a history chunk or a burst from one such chat would otherwise cost a query and a lookup of up to
 * LOOKUP_TIMEOUT_MS per message. A pair learned meanwhile (`learn`) answers at once.
 */
export const LID_MISS_TTL_MS = 60_000;

export function isLid(jid: string): boolean {
  return jid.endsWith('@lid') || jid.endsWith('@hosted.lid');
}

export function isPhoneJid(jid: string): boolean {
  return jid.endsWith('@s.whatsapp.net') || jid.endsWith('@hosted');
}

/** userJid()'s answers for the JIDs seen lately (a pure function of its input: one table for the worker). */
const normalised = new Map<string, string>();
/** Past this many, the table starts over (a few hundred KB at most). */
const NORMALISED_MAX = 4_096;

/**
 * `5511…:3@s.whatsapp.net` → `5511…@s.whatsapp.net`; '' for nothing. Asked several times for every message
 * (its chat, sender, their alternates), mostly of the same few users: each JID is decoded once while it is
 * in the table, not every time (issue #38: ~5 KB allocated per received message).
 */
export function userJid(jid: string | null | undefined): string {
  if (!jid) return '';
  const known = normalised.get(jid);
  if (known !== undefined) return known;
  let user: string;
  try {
    user = jidNormalizedUser(jid) || '';
  } catch {
    user = '';
  }
  if (normalised.size >= NORMALISED_MAX) normalised.clear();
  normalised.set(jid, user);
  return user;
}

/**
 * Resolves the LID ↔ phone-number pair of the users a message names (guarantee 4): first what the
 * message itself says (`remoteJidAlt` / `participantAlt`), then Baileys' LID store (auth keys), then
 * the instance's lid_mappings table. Pairs learned from messages are collected for the caller to
 * store with the message.
 */
export class IdentityResolver {
  private readonly pnByLid = new Map<string, string>();
  private readonly lidByPn = new Map<string, string>();
  /** Numbers whose LID was not found, and when (see LID_MISS_TTL_MS). */
  private readonly lidMissedAt = new Map<string, number>();
  private learned: LidMapping[] = [];

  constructor(
    private readonly socket: WASocket,
    private readonly instanceId: string,
    private readonly mappings: LidMappingRepository,
    private readonly logger: Logger,
    /** Whether the socket is not being read now: a usync's answer is not waited for then (answerWhileRead). */
    private readonly stuck: () => boolean = () => false,
  ) {}

  /** The linked account itself. */
  me(): Party {
    // Asked for every message received: userJid() answers the account's JIDs from its table.
    const user = this.socket.user;
    const pn = userJid(user?.id);
    const lid = userJid(user?.lid);
    return { jid: lid || pn, pn, lid };
  }

  /** Both identities of a user JID (PN or LID), given the alternate the message carried, if any. */
  async party(jid: string | null | undefined, alternate?: string | null): Promise<Party> {
    const primary = userJid(jid);
    const alt = userJid(alternate);
    if (!primary) return { jid: '', pn: '', lid: '' };
    if (isLid(primary)) {
      const pn = alt && isPhoneJid(alt) ? alt : await this.pnFor(primary);
      if (alt && isPhoneJid(alt)) this.learn(primary, alt);
      return { jid: primary, pn, lid: primary };
    }
    if (isPhoneJid(primary)) {
      const lid = alt && isLid(alt) ? alt : await this.lidFor(primary);
      if (alt && isLid(alt)) this.learn(alt, primary);
      return { jid: primary, pn: primary, lid };
    }
    return { jid: primary, pn: '', lid: '' };
  }

  /** A pair WhatsApp revealed (e.g. `lid-mapping.update`); kept for the next write. */
  learn(lid: string, pn: string): void {
    const l = userJid(lid);
    const p = userJid(pn);
    if (!isLid(l) || !isPhoneJid(p)) return;
    if (this.pnByLid.get(l) === p) return;
    this.remember(l, p);
    this.learned.push({ lid: l, pn: p });
  }

  /** Pairs a failed write could not store: kept for the next one. */
  giveBack(pairs: LidMapping[]): void {
    this.learned.push(...pairs);
  }

  /** Pairs learned since the last call. */
  takeLearned(): LidMapping[] {
    const learned = this.learned;
    this.learned = [];
    return learned;
  }

  async pnFor(lid: string): Promise<string> {
    const cached = this.pnByLid.get(lid);
    if (cached) return cached;
    let pn = '';
    try {
      // Baileys' own store, not WhatsApp: bounded by the timeout alone.
      pn = userJid(await answerWhileRead(this.socket.signalRepository.lidMapping.getPNForLID(lid), LOOKUP_TIMEOUT_MS, () => false));
    } catch (error) {
      this.logger.debug({ err: error, lid }, 'LID lookup in the Baileys store failed');
    }
    // Found in Baileys' store (a usync of a send, a history sync): kept in ours too, which resolves the
    // messages stored while this sender was only a LID (LidMappingRepository.resolveMessages).
    if (pn && isPhoneJid(pn)) this.learned.push({ lid, pn });
    if (!pn) pn = (await this.mappings.pnForLid(this.instanceId, lid).catch(() => null)) ?? '';
    if (pn) this.remember(lid, pn);
    return pn;
  }

  async lidFor(pn: string): Promise<string> {
    const cached = this.lidByPn.get(pn);
    if (cached) return cached;
    const missedAt = this.lidMissedAt.get(pn);
    if (missedAt !== undefined && Date.now() - missedAt < LID_MISS_TTL_MS) return '';
    let lid = (await this.mappings.lidForPn(this.instanceId, pn).catch(() => null)) ?? '';
    if (!lid) {
      try {
        // May ask WhatsApp (usync) when Baileys has never seen this number: bounded.
        lid = userJid(await answerWhileRead(this.socket.signalRepository.lidMapping.getLIDForPN(pn), LOOKUP_TIMEOUT_MS, this.stuck));
      } catch (error) {
        this.logger.debug({ err: error, pn }, 'PN lookup in the Baileys store failed');
      }
      if (lid && isLid(lid)) this.learned.push({ lid, pn });
    }
    if (lid) this.remember(lid, pn);
    else {
      if (this.lidMissedAt.size > CACHE_LIMIT) this.lidMissedAt.clear();
      this.lidMissedAt.set(pn, Date.now());
    }
    return lid;
  }

  private remember(lid: string, pn: string): void {
    if (this.pnByLid.size > CACHE_LIMIT) {
      this.pnByLid.clear();
      this.lidByPn.clear();
    }
    this.pnByLid.set(lid, pn);
    this.lidByPn.set(pn, lid);
    this.lidMissedAt.delete(pn);
  }
}
