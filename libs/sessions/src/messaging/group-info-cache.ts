import type { Logger } from '@gw/platform';
import type { GroupMetadata, WASocket } from '../baileys';
import { answerWhileRead } from './answer-while-read';

/** What a group chat shows besides its messages. */
export interface GroupInfo {
  subject: string;
  flags: { admin: boolean; member: boolean; announce: boolean; community: boolean };
  /** LID ↔ number pairs of the participants (LID-addressed groups list both). */
  participants: Array<{ lid: string; pn: string }>;
}

const TTL_MS = 10 * 60_000;
const FAILED_TTL_MS = 30_000;
const FETCH_TIMEOUT_MS = 3_000;
const LIMIT = 2_000;

/**
 * Group subjects and our role in them, for `groupName` and the chat's group flags. One metadata
 * query per group per ten minutes at most (shared by the sockets of an instance); subject changes
 * (`groups.update`) refresh it at once, and any other notification about the group makes the next
 * read ask again (or take the metadata the groups cache holds). A query that fails or times out, or
 * whose socket is not being read (a flood in front of its answer), leaves the last name known (or
 * none) rather than holding the message back; an answer that comes after that is kept.
 */
export class GroupInfoCache {
  private readonly entries = new Map<string, { info: GroupInfo | null; at: number }>();

  constructor(private readonly logger: Logger) {}

  /**
   * `known`: the group's metadata as the groups cache holds it (fresh), used instead of a query.
   * `stuck`: whether the socket is not being read (answerWhileRead): the query is not waited for then,
   * and its answer, when it comes, is kept for the next read.
   */
  async get(
    socket: WASocket,
    instanceId: string,
    groupJid: string,
    me: { pn: string; lid: string },
    known?: GroupMetadata,
    stuck: () => boolean = () => false,
  ): Promise<GroupInfo | null> {
    const key = `${instanceId}|${groupJid}`;
    const cached = this.entries.get(key);
    if (cached && Date.now() - cached.at < (cached.info ? TTL_MS : FAILED_TTL_MS)) return cached.info;
    if (known) {
      const info = toGroupInfo(known, me);
      this.set(key, info);
      return info;
    }
    let info: GroupInfo | null = null;
    try {
      const metadata = await answerWhileRead(socket.groupMetadata(groupJid), FETCH_TIMEOUT_MS, stuck, (late) => this.set(key, toGroupInfo(late, me)));
      if (metadata) info = toGroupInfo(metadata, me);
    } catch (error) {
      this.logger.debug({ err: error, groupJid }, 'group metadata unavailable');
    }
    this.set(key, info ?? cached?.info ?? null);
    return info ?? cached?.info ?? null;
  }

  /** A notification about the group (w:gp2, picture): the next read asks again, keeping what is known until it answers. */
  invalidate(instanceId: string, groupJid: string): void {
    const cached = this.entries.get(`${instanceId}|${groupJid}`);
    if (cached) cached.at = 0;
  }

  /** A subject change seen in `groups.update`. */
  rename(instanceId: string, groupJid: string, subject: string): void {
    const key = `${instanceId}|${groupJid}`;
    const cached = this.entries.get(key);
    if (cached?.info) cached.info.subject = subject;
  }

  private set(key: string, info: GroupInfo | null): void {
    if (this.entries.size >= LIMIT) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.delete(key);
    this.entries.set(key, { info, at: Date.now() });
  }
}

export function toGroupInfo(metadata: GroupMetadata, me: { pn: string; lid: string }): GroupInfo {
  const mine = metadata.participants.find((participant) => {
    const ids = [participant.id, participant.lid, participant.phoneNumber].filter(Boolean).map((jid) => (jid as string).replace(/:\d+@/, '@'));
    return ids.includes(me.pn) || ids.includes(me.lid);
  });
  const bare = (jid: string | undefined) => (jid ?? '').replace(/:\d+@/, '@');
  const participants = metadata.participants
    .map((participant) => {
      const ids = [participant.id, participant.lid, participant.phoneNumber].map(bare);
      return { lid: ids.find((jid) => jid.endsWith('@lid')) ?? '', pn: ids.find((jid) => jid.endsWith('@s.whatsapp.net')) ?? '' };
    })
    .filter((pair) => pair.lid && pair.pn);
  return {
    subject: metadata.subject ?? '',
    participants,
    flags: {
      admin: mine?.admin === 'admin' || mine?.admin === 'superadmin',
      member: Boolean(mine),
      announce: Boolean(metadata.announce),
      community: Boolean(metadata.isCommunity),
    },
  };
}
