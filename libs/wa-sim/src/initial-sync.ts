// What a phone sends a companion at its first login after pairing: the app-state key share, then the
// history sync notification(s) of the account's history (set through the API) or a default chunk.
import { deflateSync } from 'zlib';
import { proto } from './baileys';
import type { Account } from './accounts';

/** The peer messages of an initial sync, in the order they are sent (each made when the previous one went). */
export function* initialSyncMessages(account: Account): Generator<proto.IMessage> {
  const keyShare: proto.IMessage = {
    protocolMessage: {
      type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
      appStateSyncKeyShare: {
        keys: [
          {
            keyId: { keyId: account.appStateKey.keyId },
            keyData: {
              keyData: account.appStateKey.keyData,
              fingerprint: { rawId: account.advRawId, currentIndex: 0, deviceIndexes: [0] },
              timestamp: account.appStateKey.timestamp,
            },
          },
        ],
      },
    },
  };
  yield keyShare;
  const chunks = account.history ?? [defaultHistory(account)];
  for (const [index, chunk] of chunks.entries()) {
    const sync = proto.HistorySync.fromObject(chunk);
    const payload = deflateSync(proto.HistorySync.encode(sync).finish());
    yield {
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
        historySyncNotification: {
          syncType: sync.syncType,
          chunkOrder: sync.chunkOrder ?? index,
          progress: sync.progress ?? undefined,
          initialHistBootstrapInlinePayload: payload,
        },
      },
    };
  }
}

function defaultHistory(account: Account): Record<string, unknown> {
  return {
    syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
    conversations: [],
    pushnames: [{ id: account.jid, pushname: account.name }],
    phoneNumberToLidMappings: [{ pnJid: account.jid, lidJid: account.lidJid }],
    progress: 100,
    chunkOrder: 0,
  };
}
