import type { GroupMetadata } from '../baileys';

/** Longest a group is answered from memory without any notification about it (a missed one while offline). */
const TTL_MS = 10 * 60_000;
/** Groups kept per instance (the least recently read go first). */
const LIMIT_PER_INSTANCE = 5_000;

interface InstanceGroups {
  /** null: a group of the list whose metadata was dropped (it stays in the list until re-read). */
  groups: Map<string, { metadata: GroupMetadata; at: number } | null>;
  /** When the whole list of the instance's groups was read (null: not known, or a membership changed since). */
  listedAt: number | null;
}

/**
 * What `/group/info` and `/group/list` answer without asking WhatsApp: each group's metadata as last read,
 * kept fresh by WhatsApp's group notifications. A `w:gp2` or `picture` notification about a group drops
 * it (the next read asks WhatsApp); one that changes who is in a group (create, add, remove, leave, a
 * community link) drops the list too, since the instance may have joined or left. A reconnect forgets
 * the instance (notifications may have been missed while away), and nothing is kept longer than TTL_MS.
 * `force` on the API bypasses it. The worker's own changes store what they read back.
 */
export class GroupMetadataCache {
  private readonly instances = new Map<string, InstanceGroups>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The group as last read, or undefined when unknown, dropped or too old. */
  get(instanceId: string, groupJid: string): GroupMetadata | undefined {
    const entry = this.instances.get(instanceId)?.groups.get(groupJid);
    if (!entry || this.now() - entry.at > TTL_MS) return undefined;
    return entry.metadata;
  }

  /** Every group of the instance, when the list and each of its groups are fresh; else undefined. */
  list(instanceId: string): GroupMetadata[] | undefined {
    const known = this.instances.get(instanceId);
    if (!known || known.listedAt === null || this.now() - known.listedAt > TTL_MS) return undefined;
    const groups: GroupMetadata[] = [];
    for (const jid of known.groups.keys()) {
      const metadata = this.get(instanceId, jid);
      if (!metadata) return undefined;
      groups.push(metadata);
    }
    return groups;
  }

  put(instanceId: string, metadata: GroupMetadata): void {
    const known = this.of(instanceId);
    known.groups.delete(metadata.id);
    known.groups.set(metadata.id, { metadata, at: this.now() });
    if (known.groups.size > LIMIT_PER_INSTANCE) {
      const oldest = known.groups.keys().next().value;
      if (oldest !== undefined) known.groups.delete(oldest);
      known.listedAt = null;
    }
  }

  /** The whole list as WhatsApp answered it: the groups not in it are gone. */
  putList(instanceId: string, groups: GroupMetadata[]): void {
    const known: InstanceGroups = { groups: new Map(), listedAt: this.now() };
    this.instances.set(instanceId, known);
    for (const metadata of groups.slice(0, LIMIT_PER_INSTANCE)) known.groups.set(metadata.id, { metadata, at: known.listedAt! });
    if (groups.length > LIMIT_PER_INSTANCE) known.listedAt = null;
  }

  /** A notification about the group: read it from WhatsApp next time; `membership`: the list may have changed too. */
  invalidate(instanceId: string, groupJid: string, membership: boolean): void {
    const known = this.instances.get(instanceId);
    if (!known) return;
    if (known.groups.has(groupJid)) known.groups.set(groupJid, null);
    if (membership) known.listedAt = null;
  }

  /** The instance left a group (or it is gone): not in the list any more. */
  remove(instanceId: string, groupJid: string): void {
    this.instances.get(instanceId)?.groups.delete(groupJid);
  }

  forget(instanceId: string): void {
    this.instances.delete(instanceId);
  }

  private of(instanceId: string): InstanceGroups {
    let known = this.instances.get(instanceId);
    if (!known) {
      known = { groups: new Map(), listedAt: null };
      this.instances.set(instanceId, known);
    }
    return known;
  }
}

/** The w:gp2 children that change who is in a group (so whether the instance is in it). */
const MEMBERSHIP_CHANGES = new Set(['create', 'add', 'remove', 'leave', 'modify', 'link', 'unlink', 'delete']);

/** The group a notification is about and whether it may change the list of the instance's groups; null for others. */
export function groupNotificationOf(node: { attrs: Record<string, string>; content?: unknown }): { groupJid: string; membership: boolean } | null {
  const { from, type } = node.attrs;
  if (!from?.endsWith('@g.us') || (type !== 'w:gp2' && type !== 'picture')) return null;
  const children = Array.isArray(node.content) ? (node.content as Array<{ tag: string }>) : [];
  return { groupJid: from, membership: type === 'w:gp2' && children.some((child) => MEMBERSHIP_CHANGES.has(child.tag)) };
}
