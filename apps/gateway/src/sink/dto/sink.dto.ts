import { applyDecorators } from '@nestjs/common';
import { RABBITMQ_EXCHANGE_TYPES } from '@gw/relay';
import { IsDefined, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { DeliveryFilterDto, EVENTS_RULES } from '../../webhook/dto/webhook.dto';
import { JSONSchema } from 'class-validator-jsonschema';

const URL_RULES = [IsString({ message: 'url must be a string' }), MaxLength(2000, { message: 'url must be at most 2000 characters' })];
const Optional = (...rules: PropertyDecorator[]) => applyDecorators(IsOptional(), ...rules);

/** The broker's address, credentials in the user info; required when a sink is created. */
const SinkUrl = () => Optional(...URL_RULES);
const RequiredSinkUrl = () => applyDecorators(IsDefined({ message: 'url is required' }), ...URL_RULES, MinLength(1, { message: 'url is required' }));
const Events = () => Optional(...EVENTS_RULES);
const RequiredEvents = () => applyDecorators(IsDefined({ message: 'events is required' }), ...EVENTS_RULES);

/** RabbitMQ: the exchange (declared durable when missing; '' = the default exchange), its type, the routing key template. */
const Exchange = () =>
  Optional(
    IsString({ message: 'exchange must be a string' }),
    MaxLength(255, { message: 'exchange must be at most 255 characters' }),
    Matches(/^[A-Za-z0-9_.:-]*$/, { message: 'exchange may contain only letters, digits, -, _, . and :' }),
  );
const ExchangeType = () => Optional(IsIn(RABBITMQ_EXCHANGE_TYPES, { message: `exchangeType must be one of ${RABBITMQ_EXCHANGE_TYPES.join(', ')}` }));
const RoutingKey = () =>
  Optional(
    IsString({ message: 'routingKey must be a string' }),
    MinLength(1, { message: 'routingKey must not be empty' }),
    MaxLength(255, { message: 'routingKey must be at most 255 characters' }),
  );
/** NATS: subjects `<subjectPrefix>.<instance>.<event>`, kept by the JetStream stream `stream`. */
const SubjectPrefix = () =>
  Optional(
    IsString({ message: 'subjectPrefix must be a string' }),
    MaxLength(200, { message: 'subjectPrefix must be at most 200 characters' }),
    Matches(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, { message: 'subjectPrefix must be subject tokens (letters, digits, - and _) joined by dots' }),
  );
const Stream = () =>
  Optional(IsString({ message: 'stream must be a string' }), Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'stream must be 1-64 letters, digits, - and _' }));
/** Kafka: the topic (records keyed by instance). */
const Topic = () =>
  Optional(IsString({ message: 'topic must be a string' }), Matches(/^[A-Za-z0-9._-]{1,249}$/, { message: 'topic must be 1-249 letters, digits, ., - and _' }));

/** An instance's sinks of one kind, `/webhook` style: simple mode (no action, no id) or `add` / `update` / `delete` one by `id`. */
class InstanceSinkDto extends DeliveryFilterDto {
  @IsOptional()
  @IsIn(['add', 'update', 'delete'], { message: 'action must be one of add, update, delete' })
  @JSONSchema({ description: '`add`, `update` (with `id`) or `delete` (with `id`); absent for the simple mode (one sink, created or updated)' })
  action?: 'add' | 'update' | 'delete';

  @IsOptional()
  @IsString()
  @MaxLength(100)
  @JSONSchema({ description: "The sink's id, for `update` and `delete`" })
  id?: string;

  @SinkUrl()
  @JSONSchema({ description: "The broker's address, credentials in its user info (e.g. `amqp://user:password@host:5672`); required when a sink is created" })
  url?: string;

  @Events()
  @JSONSchema({ description: 'The events to publish (e.g. `messages`, `messages_update`, `connection`); every event when empty' })
  events?: string[];
}

/** `POST /sink/rabbitmq`. */
export class RabbitMqSinkDto extends InstanceSinkDto {
  @JSONSchema({ description: 'The RabbitMQ exchange (declared durable when missing; an empty string is the default exchange); `wa-gateway` by default' })
  @Exchange()
  exchange?: string;
  @JSONSchema({ description: "The exchange's type: `topic` (the default), `direct`, `fanout` or `headers`" })
  @ExchangeType()
  exchangeType?: string;
  @JSONSchema({ description: 'The routing key template, `{instance}.{event}` by default' })
  @RoutingKey()
  routingKey?: string;
}

/** `POST /sink/nats`. */
export class NatsSinkDto extends InstanceSinkDto {
  @JSONSchema({ description: "The subjects' prefix: events go to `<subjectPrefix>.<instance>.<event>` (`wa-gateway.events` by default)" })
  @SubjectPrefix()
  subjectPrefix?: string;
  @JSONSchema({ description: 'The JetStream stream that keeps the subjects (`WA_GATEWAY_EVENTS` by default)' })
  @Stream()
  stream?: string;
}

/** `POST /sink/kafka`. */
export class KafkaSinkDto extends InstanceSinkDto {
  @JSONSchema({ description: 'The Kafka topic (records keyed by instance), `wa-gateway-events` by default' })
  @Topic()
  topic?: string;
}

/** `POST /globalsink/rabbitmq`: the one RabbitMQ sink of every instance; its URL and events are required. */
export class GlobalRabbitMqSinkDto extends DeliveryFilterDto {
  @JSONSchema({ description: "The broker's address, credentials in its user info (e.g. `amqp://user:password@host:5672`); required when a sink is created" })
  @RequiredSinkUrl()
  url!: string;
  @JSONSchema({ description: 'The events to publish (e.g. `messages`, `messages_update`, `connection`); every event when empty' })
  @RequiredEvents()
  events!: string[];
  @JSONSchema({ description: 'The RabbitMQ exchange (declared durable when missing; an empty string is the default exchange); `wa-gateway` by default' })
  @Exchange()
  exchange?: string;
  @JSONSchema({ description: "The exchange's type: `topic` (the default), `direct`, `fanout` or `headers`" })
  @ExchangeType()
  exchangeType?: string;
  @JSONSchema({ description: 'The routing key template, `{instance}.{event}` by default' })
  @RoutingKey()
  routingKey?: string;
}

/** `POST /globalsink/nats`. */
export class GlobalNatsSinkDto extends DeliveryFilterDto {
  @JSONSchema({ description: "The broker's address, credentials in its user info (e.g. `amqp://user:password@host:5672`); required when a sink is created" })
  @RequiredSinkUrl()
  url!: string;
  @JSONSchema({ description: 'The events to publish (e.g. `messages`, `messages_update`, `connection`); every event when empty' })
  @RequiredEvents()
  events!: string[];
  @JSONSchema({ description: "The subjects' prefix: events go to `<subjectPrefix>.<instance>.<event>` (`wa-gateway.events` by default)" })
  @SubjectPrefix()
  subjectPrefix?: string;
  @JSONSchema({ description: 'The JetStream stream that keeps the subjects (`WA_GATEWAY_EVENTS` by default)' })
  @Stream()
  stream?: string;
}

/** `POST /globalsink/kafka`. */
export class GlobalKafkaSinkDto extends DeliveryFilterDto {
  @JSONSchema({ description: "The broker's address, credentials in its user info (e.g. `amqp://user:password@host:5672`); required when a sink is created" })
  @RequiredSinkUrl()
  url!: string;
  @JSONSchema({ description: 'The events to publish (e.g. `messages`, `messages_update`, `connection`); every event when empty' })
  @RequiredEvents()
  events!: string[];
  @JSONSchema({ description: 'The Kafka topic (records keyed by instance), `wa-gateway-events` by default' })
  @Topic()
  topic?: string;
}

export type AnySinkDto = Partial<RabbitMqSinkDto & NatsSinkDto & KafkaSinkDto>;
