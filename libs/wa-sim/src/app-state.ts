// App-state sync (B11): a per-account patch store. Companions upload encrypted SyncdPatches
// (chatModify, labels, contacts…); we stamp versions and replay them to every device. An upload whose
// base version is behind the collection's is refused with a 409 and the patches it missed, as the
// server does. Snapshots and external mutations (blobs on the media server) are served only while the
// `app-state-external` fault asks for them (`AppStateServing`); otherwise everything goes inline.
// Because the simulated phone owns the account's app-state key, it can also author patches and read them back.
import { chatModificationToAppPatch, decodeSyncdPatch, encodeSyncdPatch, hkdf, hmacSign, makeLtHashGenerator, newLTHashState, proto } from './baileys';
import type { ChatModification, WAPatchName } from './baileys';
import type { Account, AppStateCollection } from './accounts';
import type { BinaryNode } from './node-io';
import { child, children, contentBytes, iqResult, node } from './node-io';
import { encryptMedia, type MediaServer } from './media-server';

function collectionOf(account: Account, name: string): AppStateCollection {
  let collection = account.appState.get(name);
  if (!collection) {
    collection = { version: 0, patches: [] };
    account.appState.set(name, collection);
  }
  return collection;
}

/**
 * The collection's LT hash at its version: every stored mutation mixed in order (index MAC, value MAC),
 * as a client that applied them all holds it. The server cannot decrypt values, but the MACs are in the
 * clear (the record's index blob, the value blob's last 32 bytes), so it is computed without keys. A
 * patch the phone authors carries the snapshot MAC of this hash, as a real client's does: another device
 * checks it against its own (whatsmeow ErrMismatchingLTHash, rc14 "LTHash verification failed").
 */
function lthashOf(collection: AppStateCollection): { version: number; hash: Buffer; indexValueMap: Record<string, { valueMac: Uint8Array }> } {
  let state = newLTHashState();
  for (const stored of collection.patches) {
    const generator = makeLtHashGenerator(state);
    for (const mutation of proto.SyncdPatch.decode(stored.bytes).mutations ?? []) {
      const record = mutation.record;
      if (!record?.index?.blob || !record.value?.blob) continue;
      const operation = mutation.operation ?? proto.SyncdMutation.SyncdOperation.SET;
      generator.mix({ indexMac: record.index.blob, valueMac: Buffer.from(record.value.blob).subarray(-32), operation });
    }
    state = { ...state, ...generator.finish() };
  }
  return { ...state, version: collection.version };
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

/**
 * How the server hands out state it would not put inline (the `app-state-external` fault). The shapes are
 * the real server's as its clients read them: whatsmeow's appstate.ParsePatchList and Baileys'
 * extractSyncdPatches/decodePatches (rc14 lib/Utils/chat-utils.js) — a `<snapshot>` whose content is an
 * ExternalBlobReference to an encrypted SyncdSnapshot, and patches whose `externalMutations` reference an
 * encrypted SyncdMutations; both blobs are media of type md-app-state ("WhatsApp App State Keys"),
 * downloaded by direct path from a media host.
 */
export interface AppStateServing {
  media: MediaServer;
  /** A collection asked for with return_snapshot=true comes as a snapshot blob. */
  snapshot: boolean;
  /** A patch whose mutations encode to more than this many bytes has them in a blob; null: always inline. */
  externalAbove: number | null;
}

/**
 * Answers `<iq xmlns="w:sync:app:state">`: uploads first (synchronously, so two uploads never
 * interleave), then the fetches. An upload based on an older version than the collection's is not
 * stored: its collection answers `type="error"` with `<error code="409" text="conflict"/>` and the
 * patches since that base, as WhatsApp does (whatsmeow issues #382 and #686 quote the server's node:
 * `<collection name="regular_low" type="error"><error code="409" text="conflict"/><patches><patch>…`;
 * whatsmeow's sendAppState applies those patches and sends again).
 */
export async function handleAppStateIq(account: Account, iq: BinaryNode, serving?: AppStateServing, forge?: Forger): Promise<AppStateResult> {
  const replies: Array<BinaryNode | Promise<BinaryNode>> = [];
  const changed: Array<{ name: string; version: number }> = [];
  for (const request of children(child(iq, 'sync'), 'collection')) {
    const name = request.attrs.name;
    if (!name) continue;
    const collection = collectionOf(account, name);
    const uploads = children(request, 'patch');
    if (uploads.length) {
      const base = Number(request.attrs.version);
      if (Number.isSafeInteger(base) && base < collection.version) {
        const missed = collection.patches.filter((p) => p.version > base);
        replies.push(
          node('collection', { name, type: 'error' }, [
            node('error', { code: '409', text: 'conflict' }),
            node(
              'patches',
              {},
              missed.map((p) => node('patch', {}, p.bytes)),
            ),
          ]),
        );
        continue;
      }
      for (const upload of uploads) {
        const bytes = contentBytes(upload);
        if (bytes) storePatch(account, name, proto.SyncdPatch.decode(bytes));
      }
      changed.push({ name, version: collection.version });
      replies.push(node('collection', { name, version: String(collection.version) }));
      continue;
    }
    const since = Number(request.attrs.version ?? '0');
    const version = collection.version;
    if (serving?.snapshot && request.attrs.return_snapshot === 'true' && version > 0) {
      const forgery = forge?.(name);
      const snapshot = forgery
        ? forgedSnapshot(account, name, snapshotOf(account, name, collection), forgery)
        : Promise.resolve(snapshotOf(account, name, collection));
      replies.push(
        snapshot
          .then((bytes) => externalBlob(serving.media, bytes))
          .then((ref) => node('collection', { name, version: String(version) }, [node('snapshot', {}, ref)])),
      );
      continue;
    }
    const newer = collection.patches.filter((p) => p.version > since).map((p) => p.bytes);
    const forgery = newer.length ? forge?.(name) : undefined;
    replies.push(
      (forgery ? forgedPatch(account, name, newer, forgery) : Promise.resolve(newer))
        .then((stored) => Promise.all(stored.map((bytes) => servedPatch(bytes, serving))))
        .then((patches) =>
          node(
            'collection',
            { name, version: String(version) },
            patches.length
              ? [
                  node(
                    'patches',
                    {},
                    patches.map((bytes) => node('patch', {}, bytes)),
                  ),
                ]
              : undefined,
          ),
        ),
    );
  }
  return { reply: iqResult(iq, [node('sync', {}, await Promise.all(replies))]), changed };
}

/** What a forged answer carries instead of the newest mutation's value (the `app-state-bad-mac` fault). */
export interface Forgery {
  value?: Record<string, unknown>;
}
/** Asked once per collection about to be served with content: the forgery to play on it, if any (consumes a use of the fault). */
export type Forger = (collection: string) => Forgery | undefined;

/**
 * A record whose value is `forgery.value` (merged over the genuine value, keeping its timestamp), encrypted
 * with the account's key, but with the genuine value MAC: its content MAC no longer matches.
 */
async function forgedRecord(
  account: Account,
  name: string,
  record: proto.ISyncdRecord,
  operation: proto.SyncdMutation.SyncdOperation,
  forgery: Forgery,
): Promise<proto.ISyncdRecord> {
  const { keyId, get } = keyFetcher(account);
  let decoded: { index: unknown; syncAction: proto.ISyncActionData } | undefined;
  await decodeSyncdPatch(
    proto.SyncdPatch.fromObject({ mutations: [{ operation, record }], keyId: record.keyId, version: { version: 0 } }),
    name as WAPatchName,
    newLTHashState(),
    get,
    (mutation) => {
      decoded = mutation as unknown as { index: unknown; syncAction: proto.ISyncActionData };
    },
    false,
  );
  if (!decoded) return record;
  const genuine = proto.SyncActionValue.fromObject(decoded.syncAction.value ?? {}).toJSON();
  const value = proto.SyncActionValue.fromObject({ ...genuine, ...(forgery.value ?? {}), timestamp: genuine.timestamp });
  const index = typeof decoded.index === 'string' ? (JSON.parse(decoded.index) as string[]) : (decoded.index as string[]);
  const { patch } = await encodeSyncdPatch(
    { type: name as WAPatchName, index, syncAction: value, apiVersion: decoded.syncAction.version ?? 1, operation },
    keyId,
    newLTHashState(),
    get,
  );
  const encrypted = Buffer.from(patch.mutations![0].record!.value!.blob!);
  const genuineMac = Buffer.from(record.value?.blob ?? []).subarray(-32);
  return { ...record, value: { blob: Buffer.concat([encrypted.subarray(0, -32), genuineMac]) } };
}

/** The patches to serve with the newest one's last mutation forged (the stored patches are not touched). */
async function forgedPatch(account: Account, name: string, patches: Buffer[], forgery: Forgery): Promise<Buffer[]> {
  const last = proto.SyncdPatch.decode(patches[patches.length - 1]);
  const mutation = last.mutations?.[last.mutations.length - 1];
  if (!mutation?.record) return patches;
  mutation.record = proto.SyncdRecord.fromObject(
    await forgedRecord(account, name, mutation.record, mutation.operation ?? proto.SyncdMutation.SyncdOperation.SET, forgery),
  );
  return [...patches.slice(0, -1), Buffer.from(proto.SyncdPatch.encode(last).finish())];
}

/** A snapshot whose last record is forged (its snapshot MAC is the genuine one). */
async function forgedSnapshot(account: Account, name: string, bytes: Buffer, forgery: Forgery): Promise<Buffer> {
  const snapshot = proto.SyncdSnapshot.decode(bytes);
  const record = snapshot.records?.[snapshot.records.length - 1];
  if (!record) return bytes;
  snapshot.records[snapshot.records.length - 1] = proto.SyncdRecord.fromObject(
    await forgedRecord(account, name, record, proto.SyncdMutation.SyncdOperation.SET, forgery),
  );
  return Buffer.from(proto.SyncdSnapshot.encode(snapshot).finish());
}

/** A stored patch as served: its mutations moved to a blob when they are over the size. */
async function servedPatch(bytes: Buffer, serving: AppStateServing | undefined): Promise<Buffer> {
  if (serving?.externalAbove == null) return bytes;
  const patch = proto.SyncdPatch.decode(bytes);
  const mutations = Buffer.from(proto.SyncdMutations.encode({ mutations: patch.mutations }).finish());
  if (mutations.length <= serving.externalAbove) return bytes;
  patch.externalMutations = proto.ExternalBlobReference.decode(await externalBlob(serving.media, mutations));
  patch.mutations = [];
  return Buffer.from(proto.SyncdPatch.encode(patch).finish());
}

/** Encrypts `plain` as md-app-state media, stores it, and answers the encoded ExternalBlobReference. */
async function externalBlob(media: MediaServer, plain: Buffer): Promise<Buffer> {
  const encrypted = await encryptMedia(plain, 'md-app-state');
  const { directPath } = media.store(encrypted.encrypted, 'md-app-state');
  const ref = proto.ExternalBlobReference.fromObject({
    mediaKey: encrypted.mediaKey,
    directPath,
    handle: directPath.split('/').pop()?.split('.')[0],
    fileSizeBytes: encrypted.fileLength,
    fileSha256: encrypted.fileSha256,
    fileEncSha256: encrypted.fileEncSha256,
  });
  return Buffer.from(proto.ExternalBlobReference.encode(ref).finish());
}

/**
 * The collection as one SyncdSnapshot at its version: the last record of every index (a REMOVE drops
 * it), the LT hash of their value MACs, and the snapshot MAC over it (key: bytes 96–128 of the
 * HKDF-expanded app-state key, "WhatsApp Mutation Keys", as whatsmeow's expandAppStateKeys).
 */
function snapshotOf(account: Account, name: string, collection: AppStateCollection): Buffer {
  const records = new Map<string, proto.ISyncdRecord>();
  for (const stored of collection.patches) {
    for (const mutation of proto.SyncdPatch.decode(stored.bytes).mutations ?? []) {
      const index = Buffer.from(mutation.record?.index?.blob ?? []).toString('base64');
      if (mutation.operation === proto.SyncdMutation.SyncdOperation.REMOVE) records.delete(index);
      else if (mutation.record) records.set(index, mutation.record);
    }
  }
  const lthash = makeLtHashGenerator(newLTHashState());
  for (const record of records.values()) {
    const value = Buffer.from(record.value?.blob ?? []);
    lthash.mix({ indexMac: Buffer.from(record.index?.blob ?? []), valueMac: value.subarray(-32), operation: proto.SyncdMutation.SyncdOperation.SET });
  }
  const { hash } = lthash.finish();
  const version = Buffer.alloc(8);
  version.writeUInt32BE(collection.version, 4);
  const snapshotMacKey = Buffer.from(hkdf(account.appStateKey.keyData, 160, { info: 'WhatsApp Mutation Keys' })).subarray(96, 128);
  const snapshot = proto.SyncdSnapshot.fromObject({
    version: { version: collection.version },
    records: [...records.values()],
    mac: hmacSign(Buffer.concat([hash, version, Buffer.from(name, 'utf-8')]), snapshotMacKey, 'sha256'),
    keyId: { id: account.appStateKey.keyId },
  });
  return Buffer.from(proto.SyncdSnapshot.encode(snapshot).finish());
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

/** Every app-state collection WhatsApp keeps (whatsmeow appstate.AllPatchNames). */
export const APP_STATE_COLLECTIONS: readonly string[] = ['critical_block', 'critical_unblock_low', 'regular_high', 'regular', 'regular_low'];

/**
 * The phone applies a chat modification (same shapes as Baileys' chatModify), in Baileys' collection for it
 * unless `collection` names another (an older client's). Returns the collection.
 */
export async function phonePatch(account: Account, jid: string, mod: ChatModification, collection?: string): Promise<{ name: string; version: number }> {
  const create = chatModificationToAppPatch(mod, jid);
  if (collection) create.type = collection as WAPatchName;
  const { keyId, get } = keyFetcher(account);
  const state = lthashOf(collectionOf(account, create.type));
  const { patch } = await encodeSyncdPatch(create, keyId, state, get);
  return { name: create.type, version: storePatch(account, create.type, patch) };
}

/** The phone makes an app-state mutation of its own, of any kind (a chat note, a setting…), as Baileys' appPatch encodes one. */
export async function phoneAppPatch(account: Account, create: Parameters<typeof encodeSyncdPatch>[0]): Promise<{ name: string; version: number }> {
  const { keyId, get } = keyFetcher(account);
  const state = lthashOf(collectionOf(account, create.type));
  const { patch } = await encodeSyncdPatch(create, keyId, state, get);
  return { name: create.type, version: storePatch(account, create.type, patch) };
}

export interface DecodedMutation {
  version: number;
  /** The mutation's own version (SyncActionData.version: 2 for quick replies, 7 for notes…). */
  apiVersion: number | null;
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
              apiVersion: mutation.syncAction.version ?? null,
              operation: patch.mutations?.[0]?.operation === proto.SyncdMutation.SyncdOperation.REMOVE ? 'remove' : 'set',
              index,
              action: value ? (proto.SyncActionValue.fromObject(value).toJSON() as Record<string, unknown>) : null,
            });
          },
          false,
        );
      } catch {
        mutations.push({ version: stored.version, apiVersion: null, operation: 'set', index: null, action: null });
      }
    }
    out[name] = { version: collection.version, mutations };
  }
  return out;
}

/** A chat of the phone's chat list as its app state leaves it (pin, archive, mute, read, clear, delete). */
export interface PhoneChat {
  jid: string;
  pinned: boolean;
  archived: boolean;
  /** Muted until this time (ms since the epoch; -1 forever); null when not muted. */
  muteEndTime: number | null;
  /** The last mark as read (true) or unread (false); null when never marked. */
  read: boolean | null;
  /** Its messages were cleared (and none of the chat's settings changed since). */
  cleared: boolean;
  /** Deleted from the chat list (and none of the chat's settings changed since). */
  deleted: boolean;
  /** When the last of these changes was made (ms since the epoch). */
  changedAt: number;
}

const CHAT_ACTIONS = new Set(['pin_v1', 'archive', 'mute', 'markChatAsRead', 'clearChat', 'deleteChat']);

/** The phone's chat list as folded from every stored chat action, in the order they were made. */
export async function phoneChats(account: Account): Promise<PhoneChat[]> {
  const actions: Array<{ type: string; jid: string; action: Record<string, unknown>; at: number; version: number }> = [];
  for (const { mutations } of Object.values(await decodeAppState(account))) {
    for (const mutation of mutations) {
      const index = Array.isArray(mutation.index) ? (mutation.index as unknown[]) : [];
      const [type, jid] = index;
      if (typeof type !== 'string' || !CHAT_ACTIONS.has(type) || typeof jid !== 'string' || !mutation.action || mutation.operation !== 'set') continue;
      actions.push({ type, jid, action: mutation.action, at: Number(mutation.action.timestamp ?? 0), version: mutation.version });
    }
  }
  actions.sort((a, b) => a.at - b.at || a.version - b.version);
  const chats = new Map<string, PhoneChat>();
  for (const { type, jid, action, at } of actions) {
    const chat = chats.get(jid) ?? { jid, pinned: false, archived: false, muteEndTime: null, read: null, cleared: false, deleted: false, changedAt: at };
    chat.changedAt = at;
    chat.deleted = false;
    chat.cleared = false;
    const value = (name: string) => (action[name] ?? {}) as Record<string, unknown>;
    if (type === 'pin_v1') chat.pinned = value('pinAction').pinned === true;
    else if (type === 'archive') {
      chat.archived = value('archiveChatAction').archived === true;
      if (chat.archived) chat.pinned = false;
    } else if (type === 'mute') {
      const mute = value('muteAction');
      chat.muteEndTime = mute.muted === true ? Number(mute.muteEndTimestamp ?? -1) : null;
    } else if (type === 'markChatAsRead') chat.read = value('markChatAsReadAction').read === true;
    else if (type === 'clearChat') chat.cleared = true;
    else if (type === 'deleteChat') Object.assign(chat, { pinned: false, archived: false, muteEndTime: null, read: null, deleted: true });
    chats.set(jid, chat);
  }
  return [...chats.values()];
}

/** A contact saved in the phone's address book (app-state `contactAction`, index `['contact', jid]`). */
export interface AddressBookEntry {
  jid: string;
  fullName: string;
  firstName: string;
  lidJid: string;
}

/**
 * The phone's address book: every `contact` mutation of the account's app state applied in order
 * (a set saves or renames, a remove deletes), whoever made it (the phone or a linked device).
 */
export async function addressBookOf(account: Account): Promise<AddressBookEntry[]> {
  const book = new Map<string, AddressBookEntry>();
  for (const { mutations } of Object.values(await decodeAppState(account))) {
    for (const mutation of mutations) {
      const index = typeof mutation.index === 'string' ? (JSON.parse(mutation.index) as unknown) : mutation.index;
      if (!Array.isArray(index) || index[0] !== 'contact' || typeof index[1] !== 'string') continue;
      const jid = index[1];
      const action = (mutation.action?.contactAction ?? {}) as { fullName?: string; firstName?: string; lidJid?: string };
      if (mutation.operation === 'remove') book.delete(jid);
      else book.set(jid, { jid, fullName: action.fullName ?? '', firstName: action.firstName ?? '', lidJid: action.lidJid ?? '' });
    }
  }
  return [...book.values()].sort((a, b) => a.jid.localeCompare(b.jid));
}

/** The collection a chat modification goes to; undefined when it is not one Baileys can encode. */
export function modificationCollection(jid: string, mod: ChatModification): string | undefined {
  try {
    return chatModificationToAppPatch(mod, jid).type;
  } catch {
    return undefined;
  }
}
