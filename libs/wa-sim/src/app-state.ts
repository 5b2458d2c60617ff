// App-state sync (B11): a per-account patch store. Companions upload encrypted SyncdPatches
// (chatModify, labels, contacts…); we stamp versions and replay them to every device. No
// snapshots and no external blobs, so nothing needs an HTTPS download. Because the simulated
// phone owns the account's app-state key, it can also author patches and read them back.
import { chatModificationToAppPatch, decodeSyncdPatch, encodeSyncdPatch, newLTHashState, proto } from './baileys';
import type { ChatModification, WAPatchName } from './baileys';
import type { Account, AppStateCollection } from './accounts';
import type { BinaryNode } from './node-io';
import { child, children, contentBytes, iqResult, node } from './node-io';

function collectionOf(account: Account, name: string): AppStateCollection {
  let collection = account.appState.get(name);
  if (!collection) {
    collection = { version: 0, patches: [] };
    account.appState.set(name, collection);
  }
  return collection;
}

/** Appends a patch, stamping the next version (clients omit it on upload). */
export function storePatch(account: Account, name: string, patch: proto.ISyncdPatch): number {
  const collection = collectionOf(account, name);
  collection.version += 1;
  const stamped = proto.SyncdPatch.fromObject({ ...patch, version: { version: collection.version } });
  collection.patches.push({ version: collection.version, bytes: Buffer.from(proto.SyncdPatch.encode(stamped).finish()) });
  return collection.version;
}

export interface AppStateResult {
  reply: BinaryNode;
  /** Collections that changed, so other devices can be told to resync (server_sync). */
  changed: Array<{ name: string; version: number }>;
}

export function handleAppStateIq(account: Account, iq: BinaryNode): AppStateResult {
  const replies: BinaryNode[] = [];
  const changed: Array<{ name: string; version: number }> = [];
  for (const request of children(child(iq, 'sync'), 'collection')) {
    const name = request.attrs.name;
    if (!name) continue;
    const collection = collectionOf(account, name);
    const uploads = children(request, 'patch');
    if (uploads.length) {
      for (const upload of uploads) {
        const bytes = contentBytes(upload);
        if (bytes) storePatch(account, name, proto.SyncdPatch.decode(bytes));
      }
      changed.push({ name, version: collection.version });
      replies.push(node('collection', { name, version: String(collection.version) }));
      continue;
    }
    const since = Number(request.attrs.version ?? '0');
    const newer = collection.patches.filter((p) => p.version > since);
    replies.push(
      node(
        'collection',
        { name, version: String(collection.version) },
        newer.length
          ? [
              node(
                'patches',
                {},
                newer.map((p) => node('patch', {}, p.bytes)),
              ),
            ]
          : undefined,
      ),
    );
  }
  return { reply: iqResult(iq, [node('sync', {}, replies)]), changed };
}

function keyFetcher(account: Account) {
  const keyId = account.appStateKey.keyId.toString('base64');
  const keyData = proto.Message.AppStateSyncKeyData.fromObject({
    keyData: account.appStateKey.keyData,
    fingerprint: { rawId: account.advRawId, currentIndex: 0, deviceIndexes: [0] },
    timestamp: account.appStateKey.timestamp,
  });
  return { keyId, get: async (id: string) => (id === keyId ? keyData : undefined) };
}

/** The phone applies a chat modification (same shapes as Baileys' chatModify). Returns the collection. */
export async function phonePatch(account: Account, jid: string, mod: ChatModification): Promise<{ name: string; version: number }> {
  const create = chatModificationToAppPatch(mod, jid);
  const { keyId, get } = keyFetcher(account);
  const state = { ...newLTHashState(), version: collectionOf(account, create.type).version };
  const { patch } = await encodeSyncdPatch(create, keyId, state, get);
  return { name: create.type, version: storePatch(account, create.type, patch) };
}

export interface DecodedMutation {
  version: number;
  operation: 'set' | 'remove';
  index: unknown;
  action: Record<string, unknown> | null;
}

/** Decrypts every stored patch with the account key, for inspection by tests. */
export async function decodeAppState(account: Account): Promise<Record<string, { version: number; mutations: DecodedMutation[] }>> {
  const { get } = keyFetcher(account);
  const out: Record<string, { version: number; mutations: DecodedMutation[] }> = {};
  for (const [name, collection] of account.appState) {
    const mutations: DecodedMutation[] = [];
    for (const stored of collection.patches) {
      const patch = proto.SyncdPatch.decode(stored.bytes);
      try {
        await decodeSyncdPatch(
          patch,
          name as WAPatchName,
          newLTHashState(),
          get,
          (mutation) => {
            const index: unknown = mutation.index;
            const value = mutation.syncAction.value;
            mutations.push({
              version: stored.version,
              operation: patch.mutations?.[0]?.operation === proto.SyncdMutation.SyncdOperation.REMOVE ? 'remove' : 'set',
              index,
              action: value ? (proto.SyncActionValue.fromObject(value).toJSON() as Record<string, unknown>) : null,
            });
          },
          false,
        );
      } catch {
        mutations.push({ version: stored.version, operation: 'set', index: null, action: null });
      }
    }
    out[name] = { version: collection.version, mutations };
  }
  return out;
}
