import { Inject, Injectable } from '@nestjs/common';
import { intakeOfWebhook } from '@gw/chatwoot';
import { ChatRepository, type ChatIdentity, type ChatwootConfigRow, ChatwootRepository } from '@gw/persistence';
import { recordId, SsrfError, SsrfGuard } from '@gw/platform';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../common/api-error';
import type { GatewayConfig } from '../runtime/gateway-config';
import { GATEWAY_CONFIG } from '../runtime/tokens';
import type { ChatwootConfigDto } from './dto/chatwoot-config.dto';
import type { ChatwootConfigResponse, ChatwootConfigUpdatedResponse, ChatwootWebhookAcceptedResponse } from './dto/chatwoot.response';

const UPDATED_MESSAGE = 'Chatwoot config updated successfully, put this URL in Chatwoot inbox webhook settings:';

/** While an agent works a conversation the chatbot stays silent this long after the agent's last move (until it is resolved). */
const AGENT_PAUSE_SECONDS = 24 * 3600;

/** What the token shows of itself: enough to tell two apart, never enough to use. */
function maskToken(token: string): string {
  return token.length <= 8 ? '*'.repeat(token.length) : `${token.slice(0, 4)}${'*'.repeat(token.length - 4)}`;
}

/** The chat of a WhatsApp JID, as the lead store names it. */
function identityOf(jid: string): ChatIdentity | null {
  if (jid.endsWith('@g.us')) return { pn: jid, lid: '', isGroup: true };
  if (jid.endsWith('@lid')) return { pn: '', lid: jid, isGroup: false };
  if (jid.endsWith('@s.whatsapp.net')) return { pn: jid, lid: '', isGroup: false };
  return null;
}

@Injectable()
export class ChatwootService {
  private readonly ssrf: SsrfGuard;

  constructor(
    private readonly chatwoot: ChatwootRepository,
    private readonly chats: ChatRepository,
    @Inject(GATEWAY_CONFIG) private readonly gatewayConfig: GatewayConfig,
  ) {
    this.ssrf = new SsrfGuard(gatewayConfig.ssrfAllowlist);
  }

  /** `GET /chatwoot/config`: the reference's fields (defaults before the first PUT), the token masked. */
  async config(instanceId: string): Promise<ChatwootConfigResponse> {
    const row = await this.chatwoot.findConfig(instanceId);
    return {
      chatwoot_enabled: row?.enabled ?? false,
      chatwoot_url: row?.url ?? '',
      chatwoot_account_id: row?.accountId ?? 0,
      chatwoot_inbox_id: row?.inboxId ?? 0,
      chatwoot_access_token: row ? maskToken(row.accessToken) : '',
      chatwoot_ignore_groups: row?.ignoreGroups ?? false,
      chatwoot_sign_messages: row?.signMessages ?? false,
      chatwoot_create_new_conversation: row?.createNewConversation ?? false,
      chatwoot_inbox_webhook_url: row ? this.webhookUrl(row) : '',
    };
  }

  /** `PUT /chatwoot/config`: saves the settings (the URL passes the SSRF guard now and at every call) and answers the webhook URL for the inbox. */
  async configure(instanceId: string, dto: ChatwootConfigDto): Promise<ChatwootConfigUpdatedResponse> {
    const url = dto.url.trim().replace(/\/+$/, '');
    // The API's paths are appended to it: credentials (which fetch refuses, and GET would show), a query or a fragment would break every call.
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw ApiError.badRequest('url must be an http(s) URL');
    }
    if (parsed.username || parsed.password) throw ApiError.badRequest('url must not contain credentials (user:password@): Chatwoot takes the access_token');
    if (parsed.search || parsed.hash || url.includes('?') || url.includes('#'))
      throw ApiError.badRequest('url must be the base URL of Chatwoot, without a query or fragment');
    try {
      await this.ssrf.check(url);
    } catch (error) {
      if (error instanceof SsrfError) throw ApiError.badRequest(`url refused: ${error.message}`);
      throw error;
    }
    // The masked token GET answered, sent back as it was (a client saving what it read), keeps the stored one.
    const current = await this.chatwoot.findConfig(instanceId);
    const accessToken = current && dto.access_token === maskToken(current.accessToken) ? current.accessToken : dto.access_token;
    const row = await this.chatwoot.saveConfig(
      instanceId,
      {
        enabled: dto.enabled,
        url,
        accessToken,
        accountId: dto.account_id,
        inboxId: dto.inbox_id,
        ignoreGroups: dto.ignore_groups ?? false,
        signMessages: dto.sign_messages ?? false,
        createNewConversation: dto.create_new_conversation ?? false,
      },
      `cw_${randomBytes(24).toString('base64url')}`,
    );
    return { message: UPDATED_MESSAGE, chatwoot_inbox_webhook_url: this.webhookUrl(row) };
  }

  /**
   * `POST /chatwoot/webhook/{instance}/{secret}` (the URL checked by ChatwootWebhookGuard): what the
   * webhook asks for is stored before the answer (jobs unique per Chatwoot message and event, so a
   * redelivery queues nothing) and done by the bridge's runner.
   */
  async receive(instanceId: string, body: unknown): Promise<ChatwootWebhookAcceptedResponse> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw ApiError.badRequest('Invalid request payload: the body must be a JSON object');
    const config = await this.chatwoot.findConfig(instanceId);
    if (!config?.enabled) return { received: true, queued: 0 };
    const intake = intakeOfWebhook(instanceId, body as Record<string, unknown>, config.inboxId);
    const queued = await this.chatwoot.enqueueFromChatwoot(instanceId, intake.jobs, intake.links);
    if (intake.conversationStatus)
      await this.chatwoot.setConversationStatus(instanceId, intake.conversationStatus.conversationId, intake.conversationStatus.status);
    // The chatbot (#15) honours chatbot_disableUntil: silent while an agent works the conversation.
    if (intake.agentActive)
      await this.pauseChatbot(instanceId, intake.agentActive.conversationId, intake.contact, Math.floor(Date.now() / 1000) + AGENT_PAUSE_SECONDS);
    if (intake.resolved) await this.pauseChatbot(instanceId, intake.resolved.conversationId, intake.contact, 0);
    return { received: true, queued };
  }

  private async pauseChatbot(
    instanceId: string,
    conversationId: number,
    contact: { identifier: string; phoneNumber: string } | undefined,
    until: number,
  ): Promise<void> {
    const chat = await this.chatwoot.chatOfConversation(instanceId, conversationId);
    const digits = (contact?.phoneNumber ?? '').replace(/\D/g, '');
    const identity = identityOf(chat?.chatKey ?? contact?.identifier ?? '') ?? (digits.length >= 8 ? identityOf(`${digits}@s.whatsapp.net`) : null);
    if (!identity) return;
    await this.chats.writeLead(instanceId, identity, { chatbot_disableUntil: until }, () => recordId(14));
  }

  private webhookUrl(row: ChatwootConfigRow): string {
    return `${this.gatewayConfig.publicBaseUrl.replace(/\/+$/, '')}/chatwoot/webhook/${encodeURIComponent(row.instanceId)}/${row.webhookSecret}`;
  }
}
