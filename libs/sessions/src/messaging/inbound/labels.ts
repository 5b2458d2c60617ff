import { ErrorCode, RpcError, type LabelRefreshReply } from '@gw/contracts';
import type { BaileysEventMap } from '../../baileys';
import { chatLabelsEvent, labelsEvent } from '../event-payloads';
import type { InboundContext } from './inbound-context';

/** App-state collections that carry labels and their chat associations (Baileys' chatModify puts them in `regular`). */
const LABEL_COLLECTIONS = ['regular', 'regular_low', 'regular_high'] as const;

/** Labels of one socket: label and chat-label events from the app state, and `/labels/refresh`. */
export class LabelEvents {
  /** The `/labels/refresh` running on this socket: label events emitted meanwhile carry its id. */
  private refresh: { requestId: string; force: boolean } | null = null;

  constructor(private readonly context: InboundContext) {}

  /** The id label events emitted now carry: the running refresh's, or none. */
  currentRefreshId(): string {
    return this.refresh?.requestId ?? '';
  }

  /** A label created, renamed, recoloured or deleted (app state): a `labels` event. */
  async onLabel(label: BaileysEventMap['labels.edit'], requestId: string): Promise<void> {
    if (!label?.id) return;
    const who = await this.context.who();
    const facts = {
      labelId: String(label.id),
      name: label.name ?? '',
      color: Number(label.color) || 0,
      deleted: label.deleted === true,
      predefinedId: label.predefinedId ? String(label.predefinedId) : '',
    };
    await this.context.withRetry('labels.edit', { labelId: label.id }, () =>
      this.context.write(async (tx, events) => {
        const { changed } = await this.context.services.labels.within(tx).upsert(this.context.instanceId, facts);
        // A replay of what is stored already is news only to the refresh that asked for it.
        if (changed || requestId) events.push(labelsEvent({ ...label, name: facts.name, color: facts.color }, who, requestId));
      }),
    );
  }

  /** A label put on or taken off a chat: the chat's `wa_label` follows, and a `chat_labels` event. */
  async onLabelAssociation(change: BaileysEventMap['labels.association'], requestId: string): Promise<void> {
    const association = change.association;
    if (association.type !== 'label_jid') return;
    const who = await this.context.who();
    await this.context.withRetry('labels.association', { labelId: association.labelId }, () =>
      this.context.write(async (tx, events) => {
        const labels = await this.context.services.chats.within(tx).applyLabel(this.context.instanceId, association.chatId, association.labelId, change.type);
        events.push(chatLabelsEvent({ chatId: association.chatId, labelId: association.labelId, action: change.type, labels }, who, requestId));
      }),
    );
  }

  /**
   * `/labels/refresh`: re-reads the label collections of the app state in the background (`force`:
   * from scratch, so every label and association is announced again). One at a time per socket;
   * while one runs, its id is answered.
   */
  refreshLabels(requestId: string, force: boolean): LabelRefreshReply {
    if (this.refresh) return { status: 'in_progress', requestId: this.refresh.requestId, force: this.refresh.force };
    if (!this.context.socket.authState?.creds?.myAppStateKeyId) throw new RpcError(ErrorCode.Conflict, 'history sync still in progress, try again later');
    const refresh = { requestId, force };
    this.refresh = refresh;
    void this.runRefresh(refresh);
    return { status: 'started', requestId, force };
  }

  private async runRefresh(refresh: { requestId: string; force: boolean }): Promise<void> {
    const socket = this.context.socket;
    try {
      if (refresh.force) {
        const reset = Object.fromEntries(LABEL_COLLECTIONS.map((name) => [name, null]));
        await socket.authState.keys.set({ 'app-state-sync-version': reset });
      }
      await socket.resyncAppState([...LABEL_COLLECTIONS], false);
      this.context.logger.info({ requestId: refresh.requestId, force: refresh.force }, 'labels refreshed');
    } catch (error) {
      this.context.logger.warn({ err: error, requestId: refresh.requestId }, 'label refresh failed');
    } finally {
      if (this.refresh === refresh) this.refresh = null;
    }
  }
}
