import { Inject, Injectable } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { DeliveryRepository, maskUrlCredentials, type SinkKind, WebhookRepository, type WebhookRow, type WebhookValues } from '@gw/persistence';
import { recordId, SsrfError, SsrfGuard } from '@gw/platform';
import {
  BrokerUrlError,
  checkBrokerHosts,
  generateWebhookSecret,
  kafkaSinkOptions,
  type KafkaSinkOptions,
  natsSinkOptions,
  type NatsSinkOptions,
  parseBrokerUrl,
  rabbitMqOptions,
  type RabbitMqOptions,
  subjectPrefixProblem,
} from '@gw/relay';
import { ApiError } from '../common/api-error';
import type { ReplyResponse } from '../common/dto/reply.response';
import type { WebhookErrorResponse } from '../common/dto/webhook-error.response';
import { type ErrorScope, toWebhookError } from '../webhook/webhook.service';
import type { GatewayConfig } from '../runtime/gateway-config';
import { BUS, GATEWAY_CONFIG } from '../runtime/tokens';
import type { AnySinkDto } from './dto/sink.dto';
import type { SinkResponse } from './dto/sink.response';

export type BrokerKind = Exclude<SinkKind, 'webhook'>;

const NAMES: Record<BrokerKind, string> = { rabbitmq: 'RabbitMQ', nats: 'NATS', kafka: 'Kafka' };
/** The fixed id of the global sink env names (see readEnvSinks). */
const envSinkId = (kind: BrokerKind) => `env-${kind}`;
/** The env that names each global sink (see readEnvSinks). */
const ENV_NAMES: Record<BrokerKind, string> = { rabbitmq: 'RABBITMQ_URL or AMQP_URL', nats: 'NATS_SINK_URL', kafka: 'KAFKA_BROKERS' };

/** A sink's transport options, with the defaults filled in. */
function optionsOf(kind: BrokerKind, options: Record<string, unknown>): RabbitMqOptions | NatsSinkOptions | KafkaSinkOptions {
  if (kind === 'rabbitmq') return rabbitMqOptions(options);
  if (kind === 'nats') return natsSinkOptions(options);
  return kafkaSinkOptions(options);
}

/** The options a body changes (the others keep their current values). */
function optionsIn(kind: BrokerKind, dto: AnySinkDto): Record<string, unknown> {
  const picked: Record<string, unknown> =
    kind === 'rabbitmq'
      ? { exchange: dto.exchange, exchangeType: dto.exchangeType, routingKey: dto.routingKey }
      : kind === 'nats'
        ? { subjectPrefix: dto.subjectPrefix, stream: dto.stream }
        : { topic: dto.topic };
  return Object.fromEntries(Object.entries(picked).filter(([, value]) => value !== undefined));
}

/** The API's Sink record: the broker URL with its password masked, the transport's options flat beside the filters. */
export function toSinkRecord(row: WebhookRow): SinkResponse {
  const kind = row.kind as BrokerKind;
  return {
    id: row.id,
    kind,
    enabled: row.enabled,
    url: maskUrlCredentials(row.url),
    events: row.events,
    excludeMessages: row.excludeMessages,
    includeToken: row.includeToken,
    ...optionsOf(kind, row.options),
    ...(row.disabledReason ? { disabledReason: row.disabledReason } : {}),
    ...(row.instanceId ? { instance_id: row.instanceId } : { source: row.id.startsWith('env-') ? 'env' : 'api' }),
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
  };
}

/**
 * Event sinks to message brokers (issue #18): the instance's sinks of a kind (`/sink/<kind>`) and the
 * global one (`/globalsink/<kind>`), kept with the webhooks (same filters, same relay) under their kind.
 */
@Injectable()
export class SinkService {
  private readonly ssrf: SsrfGuard;

  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly deliveries: DeliveryRepository,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Inject(BUS) private readonly bus: Bus,
  ) {
    this.ssrf = new SsrfGuard(config.ssrfAllowlist);
  }

  async list(kind: BrokerKind, instanceId: string | null): Promise<SinkResponse[]> {
    return (await this.webhooks.listFor(instanceId, kind)).map(toSinkRecord);
  }

  /** Simple mode (no action, no id) creates or updates the instance's one sink of the kind; `add`, `update` and `delete` as `/webhook`. */
  async configure(kind: BrokerKind, instanceId: string | null, dto: AnySinkDto): Promise<SinkResponse[]> {
    const action = dto.action ?? (dto.id ? 'update' : 'simple');
    if (action === 'delete') {
      if (!dto.id) throw ApiError.badRequest('id is required to delete a sink');
      if (!(await this.webhooks.delete(instanceId, dto.id, kind))) throw ApiError.notFound('Sink not found');
    } else if (action === 'add') {
      await this.webhooks.insert(recordId(14), instanceId, await this.values(kind, dto), generateWebhookSecret());
    } else {
      const target = dto.id ? await this.webhooks.find(instanceId, dto.id, kind) : (await this.webhooks.listFor(instanceId, kind))[0];
      if (dto.id && !target) throw ApiError.notFound('Sink not found');
      if (target) await this.webhooks.update(instanceId, target.id, await this.values(kind, dto, target));
      else await this.webhooks.insert(recordId(14), instanceId, await this.values(kind, dto), generateWebhookSecret());
    }
    if (action !== 'add') this.sinksChanged();
    return this.list(kind, instanceId);
  }

  /** Every global sink (at most one per broker kind); none configured is an empty list, not a 404. */
  async globalSinks(): Promise<SinkResponse[]> {
    const rows = await Promise.all((Object.keys(NAMES) as BrokerKind[]).map(async (kind) => (await this.webhooks.listFor(null, kind))[0]));
    return rows.filter((row): row is WebhookRow => row !== undefined).map(toSinkRecord);
  }

  async globalSink(kind: BrokerKind): Promise<SinkResponse> {
    const [row] = await this.webhooks.listFor(null, kind);
    if (!row) throw ApiError.notFound(`Global ${NAMES[kind]} sink not found`);
    return toSinkRecord(row);
  }

  async configureGlobal(kind: BrokerKind, dto: AnySinkDto): Promise<SinkResponse> {
    await this.refuseEnvSink(kind, 'changed');
    const list = await this.configure(kind, null, { ...dto, action: undefined, id: undefined });
    return list[0];
  }

  /** Deletes the global sink made through the API (one made before env named another too); env's own is refused. */
  async deleteGlobal(kind: BrokerKind): Promise<ReplyResponse> {
    const rows = await this.webhooks.listFor(null, kind);
    const fromApi = rows.filter((row) => row.id !== envSinkId(kind));
    if (fromApi.length === 0 && rows.length > 0) await this.refuseEnvSink(kind, 'deleted');
    let deleted = 0;
    for (const row of fromApi) if (await this.webhooks.delete(null, row.id, kind)) deleted++;
    if (deleted > 0) this.sinksChanged();
    if (deleted === 0) throw ApiError.notFound(`Global ${NAMES[kind]} sink not found`);
    return { response: `Global ${NAMES[kind]} sink deleted` };
  }

  /** The relays close at once the broker connections no enabled sink needs any more (a sink deleted, disabled or moved). */
  private sinksChanged(): void {
    this.bus.publish(Subjects.sinksChanged, {});
  }

  /**
   * A global sink env names is env's: the relay writes it over (or back) at every start, so a change or
   * deletion through the API would hold only until then. Refused with a 409 that says where to change it.
   */
  private async refuseEnvSink(kind: BrokerKind, what: string): Promise<void> {
    const rows = await this.webhooks.listFor(null, kind);
    if (rows.some((row) => row.id === envSinkId(kind)))
      throw ApiError.conflict(`Global ${NAMES[kind]} sink is configured by env (${ENV_NAMES[kind]}) and cannot be ${what} here; change the env and restart`);
  }

  async errors(kind: BrokerKind, scope: ErrorScope): Promise<WebhookErrorResponse[]> {
    return (await this.deliveries.recentErrors(scope, 20, kind)).map((row) => toWebhookError(row, scope));
  }

  /**
   * Merges the body over the current values. The URL must be the kind's (`amqp://`, `nats://`,
   * `kafka://`…) and every broker host must pass the SSRF guard, now and at every connection. A URL
   * answered masked (`user:***@`) and sent back as it was keeps the stored credentials.
   */
  private async values(kind: BrokerKind, dto: AnySinkDto, current?: WebhookRow): Promise<WebhookValues & { kind: BrokerKind }> {
    let url = dto.url ?? current?.url;
    if (!url) throw ApiError.badRequest('url is required');
    const reserved = dto.subjectPrefix !== undefined ? subjectPrefixProblem(dto.subjectPrefix) : null;
    if (reserved) throw ApiError.badRequest(reserved);
    if (current && dto.url !== undefined && dto.url === maskUrlCredentials(current.url)) url = current.url;
    try {
      await checkBrokerHosts(this.ssrf, parseBrokerUrl(kind, url));
    } catch (error) {
      if (error instanceof BrokerUrlError) throw ApiError.badRequest(error.message);
      if (error instanceof SsrfError) throw ApiError.badRequest(`url refused: ${error.message}`);
      throw error;
    }
    return {
      kind,
      url,
      options: { ...optionsOf(kind, { ...(current?.options ?? {}), ...optionsIn(kind, dto) }) },
      enabled: dto.enabled ?? current?.enabled ?? true,
      events: dto.events ?? current?.events ?? [],
      excludeMessages: dto.excludeMessages ?? current?.excludeMessages ?? [],
      addUrlEvents: false,
      addUrlTypesMessages: false,
      includeToken: dto.includeToken ?? current?.includeToken ?? false,
    };
  }
}
