import { decodePatches, decodeSyncdSnapshot, extractSyncdPatches, newLTHashState, S_WHATSAPP_NET } from '@whiskeysockets/baileys';
import type { ChatMutation, LTHashState, WAPatchName, WASocket } from '@whiskeysockets/baileys';
import { fetchOptionsOf } from '../socket/network-options';

type Socket = Pick<WASocket, 'authState' | 'query'>;

/** More rounds than any collection needs (WhatsApp sends up to a few hundred patches per answer). */
const MAX_ROUNDS = 50;

/** What a reader does with what WhatsApp answers: forget what it read (a snapshot replaces it all), take mutations (oldest first). */
export interface CollectionReader {
  snapshot(): void;
  take(mutations: ChatMutation[]): void;
}

/**
 * Reads one app-state collection with Baileys' own codec (`extractSyncdPatches`, `decodeSyncdSnapshot`,
 * `decodePatches`, the account's app-state keys), apart from the sync state Baileys keeps (reading never
 * moves its versions): from `from` on, only the patches since; without `from`, from version 0 asking for
 * the snapshot, as a full resync does. Answers the state reached; `from` is left as it was, so a failed
 * read can be started again from it. Baileys decodes collections such as `regular` and `regular_low`
 * but drops the mutations it has no event for (chat notes, quick replies): those are read here.
 */
export async function readAppStateCollection(socket: Socket, name: WAPatchName, from: LTHashState | undefined, reader: CollectionReader): Promise<LTHashState> {
  const getKey = async (keyId: string) => (await socket.authState.keys.get('app-state-sync-key', [keyId]))[keyId];
  // Snapshots and external mutations are blobs on WhatsApp's media hosts: fetched through the instance's proxy.
  // Their MACs are checked (snapshot MAC, patch MAC, each mutation's value MAC), as whatsmeow does.
  const options = fetchOptionsOf(socket);
  let state: LTHashState = from ? { ...from, indexValueMap: { ...from.indexValueMap } } : newLTHashState();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const result = await socket.query({
      tag: 'iq',
      attrs: { to: S_WHATSAPP_NET, xmlns: 'w:sync:app:state', type: 'set' },
      content: [
        {
          tag: 'sync',
          attrs: {},
          content: [{ tag: 'collection', attrs: { name, version: String(state.version), return_snapshot: String(state.version === 0) } }],
        },
      ],
    });
    const decoded = (await extractSyncdPatches(result, options))[name];
    if (!decoded) break;
    if (decoded.snapshot) {
      const snapshot = await decodeSyncdSnapshot(name, decoded.snapshot, getKey, undefined, true);
      state = snapshot.state;
      reader.snapshot();
      reader.take(Object.values(snapshot.mutationMap));
    }
    if (decoded.patches.length) {
      const patched = await decodePatches(name, decoded.patches, state, getKey, options, undefined, undefined, true);
      state = patched.state;
      reader.take(Object.values(patched.mutationMap));
    }
    if (!decoded.hasMorePatches) break;
  }
  return state;
}
