import { Injectable } from '@nestjs/common';
import { ErrorCode, RpcError, type WaMessageLimitsReply } from '@gw/contracts';
import { HistorySyncRepository, InstanceRepository, SendLimitRepository, type SendLimit } from '@gw/persistence';
import { newRequestId } from '@gw/platform';
import { ApiError } from '../common/api-error';
import { AsyncQueueService } from '../message/async/async-queue.service';
import { SessionClient } from '../session/session.client';
import { historyRequest } from './instance.rules';
import type { HistorySyncStatusResponse, InstanceResetResponse, WaMessageLimitsResponse } from './dto/instance.response';
import type { RequestInstance } from '../common/request-instance';

/** A sync whose last batch is older than this, without WhatsApp saying it was the last, is taken as done (the phone sends nothing more). */
export const HISTORY_QUIET_MS = 60_000;

const RESTRICTED = {
  message:
    'WhatsApp indicates that the currently connected account is under a temporary restriction for starting new conversations. This is not an internal API error.',
  message_ptbr:
    'O WhatsApp indica que a conta atualmente conectada está sob uma restrição temporária para iniciar novas conversas. Isso não é um erro interno da API.',
};
const CAPPED = {
  message:
    'WhatsApp indicates that the currently connected account has used its quota of messages that start new conversations in this cycle. This is not an internal API error.',
  message_ptbr:
    'O WhatsApp indica que a conta atualmente conectada usou sua cota de mensagens para iniciar novas conversas neste ciclo. Isso não é um erro interno da API.',
};
const UNRESTRICTED = {
  message: 'No WhatsApp restriction for starting new conversations was detected for the currently connected account.',
  message_ptbr: 'Nenhuma restrição de envio de novas conversas foi identificada no WhatsApp para a conta atualmente conectada.',
};
const UNKNOWN = {
  message: 'WhatsApp did not answer the limit queries for the currently connected account; the diagnosis is incomplete.',
  message_ptbr: 'O WhatsApp não respondeu às consultas de limite da conta atualmente conectada; o diagnóstico está incompleto.',
};

const STORED_NOTE =
  '; WhatsApp did not answer the live query now, so this is the limit the instance learnt when WhatsApp refused a send or announced it, in force until then';
const STORED_NOTE_PTBR =
  '; o WhatsApp não respondeu à consulta agora, então este é o limite que a instância registrou quando o WhatsApp recusou um envio ou o anunciou, em vigor até então';

/**
 * The instance's runtime: `/instance/reset` (a controlled reconnect of a stuck session, keeping the
 * device linked), `/instance/wa_messages_limits` (what WhatsApp says about starting new chats) and
 * `/instance/history-sync/status` (how far the pairing's history has come).
 */
@Injectable()
export class InstanceRuntimeService {
  constructor(
    private readonly instances: InstanceRepository,
    private readonly sessions: SessionClient,
    private readonly queue: AsyncQueueService,
    private readonly histories: HistorySyncRepository,
    private readonly sendLimits: SendLimitRepository,
  ) {}

  /**
   * Restarts the session from its stored credentials (no new QR): 200 started / already in progress /
   * cooldown, 409 when there is no linked device to reconnect (never paired, logged out, or pairing),
   * 403 when the instance was disconnected on purpose (`/instance/connect` brings it back). When the
   * async queue holds sends, the dispatchers are woken (`queuedRecoveryAttempted`).
   */
  async reset(instance: RequestInstance): Promise<InstanceResetResponse> {
    const entity = (await this.instances.findById(instance.id)) ?? instance;
    const refused = (kind: 'conflict' | 'forbidden', message: string) =>
      new ApiError(kind, message, { resetting: false, instanceId: instance.id, queuedRecoveryAttempted: false });
    if (!entity.paired) throw refused('conflict', 'Instance is not resettable: it has no linked device (connect it with /instance/connect)');
    if (entity.status === 'hibernated') throw refused('conflict', 'Instance is hibernated: wake it with /instance/connect');
    if (entity.desiredState === 'disconnected')
      throw refused('forbidden', 'Instance reset blocked: the instance was disconnected on purpose; connect it with /instance/connect');
    let reply = await this.sessions.requestIfHeld(instance.id, 'instance.reset', { instanceId: instance.id });
    if (!reply) {
      // Nobody holds it (a worker died and none took it yet): placing it reconnects from the stored credentials.
      await this.sessions.connect({ instanceId: instance.id, browser: 'auto', history: historyRequest(undefined), requestId: newRequestId() });
      reply = { outcome: 'started', phase: 'connecting', remainingMs: 0 };
    }
    switch (reply.outcome) {
      case 'not_resettable':
        throw refused('conflict', `Instance is not resettable while ${reply.phase === 'ended' ? 'its session ends' : 'it is pairing'}`);
      case 'in_progress':
        return { response: 'Instance reset already in progress', resetting: true, instanceId: instance.id, queuedRecoveryAttempted: false };
      case 'cooldown':
        return {
          response: `Instance reset cooldown active (${Math.max(1, Math.ceil(reply.remainingMs / 1000))}s remaining)`,
          resetting: false,
          instanceId: instance.id,
          queuedRecoveryAttempted: false,
        };
      case 'started': {
        const { queue } = await this.queue.status(entity);
        const queued = Number(queue.pending) > 0;
        if (queued) this.queue.settingsChanged(instance.id);
        return { response: 'Instance reset started', resetting: true, instanceId: instance.id, queuedRecoveryAttempted: queued };
      }
    }
  }

  /**
   * uazapi's diagnosis of WhatsApp's new-chat limits, from the two answers WhatsApp gives the connected
   * account. A query WhatsApp did not answer (or a worker that did not answer in time) is said so
   * (`available: false`, `lookup_error`), and the limit of that kind the instance learnt from a refused
   * send or a notification (send_limits), while it lasts, is shown in its place (`source: "stored"`).
   */
  async messageLimits(instance: RequestInstance): Promise<WaMessageLimitsResponse> {
    let limits: WaMessageLimitsReply;
    try {
      limits = await this.sessions.request(instance.id, 'instance.limits', { instanceId: instance.id });
    } catch (error) {
      if (!(error instanceof RpcError) || !LIVE_QUERY_FAILURES.has(error.code)) throw error;
      const why = `the limit queries could not be made: ${error.message}`;
      limits = { capping: null, cappingError: why, timelock: null, timelockError: why };
    }
    const stored = limits.capping && limits.timelock ? [] : await this.sendLimits.active(instance.id);
    return limitsView(limits, stored);
  }

  async historySyncStatus(instance: RequestInstance): Promise<HistorySyncStatusResponse> {
    const entity = (await this.instances.findById(instance.id)) ?? instance;
    const requestId = entity.pairingRequestId;
    const base: Pick<HistorySyncStatusResponse, 'instanceId' | 'request_id' | 'paired' | 'connected' | 'history_days' | 'full_sync'> = {
      instanceId: entity.id,
      request_id: requestId,
      paired: entity.paired,
      connected: entity.status === 'connected',
      history_days: entity.historyDays,
      full_sync: entity.historyFullSync,
    };
    if (!requestId)
      return {
        ...base,
        status: 'none',
        batches: 0,
        counts: { chats: 0, contacts: 0, messages: 0 },
        progress: null,
        isLatest: false,
        first_batch_at: null,
        last_batch_at: null,
      };
    const summary = await this.histories.summary(entity.id, requestId);
    const quiet = summary.lastAt !== null && Date.now() - summary.lastAt.getTime() > HISTORY_QUIET_MS;
    const status = summary.batches === 0 ? 'waiting' : summary.isLatest || (summary.progress ?? 0) >= 100 || quiet ? 'completed' : 'in_progress';
    return {
      ...base,
      status,
      batches: summary.batches,
      counts: { chats: summary.chats, contacts: summary.contacts, messages: summary.messages },
      progress: summary.progress,
      isLatest: summary.isLatest,
      first_batch_at: summary.firstAt?.toISOString() ?? null,
      last_batch_at: summary.lastAt?.toISOString() ?? null,
    };
  }
}

/** Failures of the worker's answer after which the stored limits are still worth showing (NotConnected stays a 409). */
const LIVE_QUERY_FAILURES = new Set<string>([ErrorCode.Timeout, ErrorCode.Internal, ErrorCode.Refused]);

/** `used/total` as SendLimit.detail keeps a cap's quota. */
const quotaOf = (detail: string) => {
  const [used, total] = detail.split('/').map((part) => (/^\d+$/.test(part) ? Number(part) : null));
  return { used: used ?? null, total: total ?? null };
};

/**
 * The reply of `/instance/wa_messages_limits` (uazapi's fields) from the worker's two answers, and the
 * limits in force the instance stored (send_limits), shown for a query that failed.
 */
export function limitsView(limits: WaMessageLimitsReply, stored: SendLimit[] = []): WaMessageLimitsResponse {
  const capping = limits.capping;
  const timelock = limits.timelock;
  const storedLock = timelock ? undefined : stored.find((limit) => limit.kind === 'reachout_timelock');
  const storedCap = capping ? undefined : stored.find((limit) => limit.kind === 'new_chat_cap');
  const capped =
    storedCap !== undefined ||
    (capping !== null &&
      (capping.status.toUpperCase() === 'CAPPED' || (capping.totalQuota !== null && capping.usedQuota !== null && capping.usedQuota >= capping.totalQuota)));
  const locked = timelock?.active === true || storedLock !== undefined;
  const reachable = capping !== null || timelock !== null;
  const canSend = locked || capped ? false : capping !== null && timelock !== null ? true : null;
  const wording = locked ? RESTRICTED : capped ? CAPPED : canSend ? UNRESTRICTED : UNKNOWN;
  const lockedUntil = timelock?.until || storedLock?.until.toISOString() || '';
  const lockType = (timelock ? timelock.enforcementType : storedLock?.detail) || '';
  const quota = storedCap ? quotaOf(storedCap.detail) : null;
  const usedQuota = capping ? capping.usedQuota : quota?.used;
  const totalQuota = capping ? capping.totalQuota : quota?.total;
  return {
    provider: 'whatsapp',
    reachable,
    can_send_new_messages: canSend,
    ...(locked ? { error_key: 'WHATSAPP_REACHOUT_TIMELOCK' } : capped ? { error_key: 'WHATSAPP_NEW_CHAT_MESSAGE_CAPPING' } : {}),
    ...wording,
    ...(locked
      ? {
          provider_message: `WhatsApp reported that the currently connected account is under a temporary restriction for starting new conversations (${lockType || 'unspecified'})${lockedUntil ? ` until ${lockedUntil}` : ''}${storedLock ? STORED_NOTE : ''}.`,
          provider_message_ptbr: `O WhatsApp informou que a conta atualmente conectada está sob uma restrição temporária para iniciar novas conversas (${lockType || 'não especificada'})${lockedUntil ? ` até ${lockedUntil}` : ''}${storedLock ? STORED_NOTE_PTBR : ''}.`,
        }
      : capped
        ? {
            provider_message: `WhatsApp reported that ${usedQuota ?? '?'} of ${totalQuota ?? '?'} new-conversation messages of this cycle were used${storedCap ? ` (the cycle ends at ${storedCap.until.toISOString()})${STORED_NOTE}` : ''}.`,
            provider_message_ptbr: `O WhatsApp informou que ${usedQuota ?? '?'} de ${totalQuota ?? '?'} mensagens de novas conversas deste ciclo foram usadas${storedCap ? ` (o ciclo termina em ${storedCap.until.toISOString()})${STORED_NOTE_PTBR}` : ''}.`,
          }
        : {}),
    diagnostics_endpoint: '/instance/wa_messages_limits',
    new_chat_message_capping: capping
      ? {
          available: true,
          status: capping.status,
          used_quota: capping.usedQuota,
          total_quota: capping.totalQuota,
          ...(capping.cycleStart ? { cycle_start: capping.cycleStart } : {}),
          ...(capping.cycleEnd ? { cycle_end: capping.cycleEnd } : {}),
          ...(capping.serverSentAt ? { server_sent_at: capping.serverSentAt } : {}),
          ote_status: capping.oteStatus,
          mv_status: capping.mvStatus,
        }
      : {
          available: false,
          lookup_error: limits.cappingError || 'WhatsApp gave no answer',
          ...(storedCap
            ? { status: 'CAPPED', used_quota: usedQuota, total_quota: totalQuota, cycle_end: storedCap.until.toISOString(), source: 'stored' }
            : {}),
        },
    reachout_timelock: timelock
      ? { available: true, active: timelock.active, ...(timelock.until ? { until: timelock.until } : {}), enforcement_type: timelock.enforcementType }
      : {
          available: false,
          lookup_error: limits.timelockError || 'WhatsApp gave no answer',
          ...(storedLock ? { active: true, until: lockedUntil, enforcement_type: lockType, source: 'stored' } : {}),
        },
  };
}
