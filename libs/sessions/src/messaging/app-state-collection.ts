import { decodePatches, decodeSyncdSnapshot, extractSyncdPatches, newLTHashState, S_WHATSAPP_NET } from '@whiskeysockets/baileys';
import type { ChatMutation, LTHashState, WAPatchName, WASocket } from '@whiskeysockets/baileys';
import { fetchOptionsOf } from '../socket/network-options';

type Socket = Pick<WASocket, 'authState' | 'query'>;

/** More rounds than any collection needs (WhatsApp sends up to a few hundred patches per answer). */
const MAX_ROUNDS = 50;

/**
 * What rc14 says when app state it checked does not match its MACs, instead of failing: decodePatches skips a
 * patch whose patch MAC does not match ("failed to decode patch, skipping"), drops a record whose value MAC does
 * not match without a word, and then finds the LT hash short of it ("LTHash verification failed, skipping
 * remaining patches"); either way the version moves past the refused patch, so its genuine content would never
 * be fetched. whatsmeow fails the patch list there (appstate ErrMismatchingPatchMAC / ErrMismatchingContentMAC /
 * ErrMismatchingLTHash) and fetches the collection again from a snapshot: so do we (here and in
 * socket/app-state-recovery for rc14's own sync).
 */
const MAC_MISMATCH = new Set([
  'failed to decode patch, skipping',
  'LTHash verification failed, skipping remaining patches',
  // A snapshot short of a record whose value MAC did not match: rc14 keeps the partial state.
  'LTHash verification failed on snapshot, continuing with partial state',
]);

/** The collection a warning of rc14's names, when it says that a patch did not match its MACs. */
export function macMismatchOf(obj: unknown, msg: unknown): string | undefined {
  if (typeof msg !== 'string' || !MAC_MISMATCH.has(msg)) return undefined;
  const name = (obj as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : undefined;
}

/** rc14's logger interface (not exported from the package root). */
type ILogger = NonNullable<Parameters<typeof decodePatches>[6]> & NonNullable<Parameters<typeof decodeSyncdSnapshot>[5]>;

/** A logger for rc14's decodePatches that only listens for MAC mismatches. */
function macWatcher(onMismatch: () => void): ILogger {
  const quiet = () => undefined;
  const logger: ILogger = {
    level: 'warn',
    child: () => logger,
    trace: quiet,
    debug: quiet,
    info: quiet,
    error: quiet,
    warn: (obj, msg) => {
      if (macMismatchOf(obj, msg)) onMismatch();
    },
  };
  return logger;
}

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
 * but drops the mutations it has no event for (chat notes, quick replies): those are read here. A patch whose
 * MACs do not match is not taken: the collection is read again from the start (its snapshot), once.
 */
export async function readAppStateCollection(socket: Socket, name: WAPatchName, from: LTHashState | undefined, reader: CollectionReader): Promise<LTHashState> {
  const getKey = async (keyId: string) => (await socket.authState.keys.get('app-state-sync-key', [keyId]))[keyId];
  // Snapshots and external mutations are blobs on WhatsApp's media hosts: fetched through the instance's proxy.
  // Their MACs are checked (snapshot MAC, patch MAC, each mutation's value MAC), as whatsmeow does.
  const options = fetchOptionsOf(socket);
  let state: LTHashState = from ? { ...from, indexValueMap: { ...from.indexValueMap } } : newLTHashState();
  let refetched = false;
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
      let mismatch = false;
      const snapshot = await decodeSyncdSnapshot(
        name,
        decoded.snapshot,
        getKey,
        undefined,
        true,
        macWatcher(() => (mismatch = true)),
      );
      if (mismatch) {
        if (refetched) throw new Error(`the ${name} app state does not match its MACs, even read again from its snapshot`);
        refetched = true;
        state = newLTHashState();
        reader.snapshot();
        continue;
      }
      state = snapshot.state;
      reader.snapshot();
      reader.take(Object.values(snapshot.mutationMap));
    }
    if (decoded.patches.length) {
      let mismatch = false;
      const patched = await decodePatches(
        name,
        decoded.patches,
        state,
        getKey,
        options,
        undefined,
        macWatcher(() => (mismatch = true)),
        true,
      );
      if (mismatch) {
        if (refetched) throw new Error(`the ${name} app state does not match its MACs, even read again from its snapshot`);
        // Nothing of this answer is taken: what the reader has is forgotten and the collection read from its snapshot.
        refetched = true;
        state = newLTHashState();
        reader.snapshot();
        continue;
      }
      state = patched.state;
      reader.take(Object.values(patched.mutationMap));
    }
    if (!decoded.hasMorePatches) break;
  }
  return state;
}
