import { applyDecorators } from '@nestjs/common';
import { RABBITMQ_EXCHANGE_TYPES } from '@gw/relay';
import { IsDefined, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { DeliveryFilterDto, EVENTS_RULES } from '../../webhook/dto/webhook.dto';

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
  action?: 'add' | 'update' | 'delete';

  @IsOptional()
  @IsString()
  @MaxLength(100)
  id?: string;

  @SinkUrl()
  url?: string;

  @Events()
  events?: string[];
}

/** `POST /sink/rabbitmq`. */
export class RabbitMqSinkDto extends InstanceSinkDto {
  @Exchange() exchange?: string;
  @ExchangeType() exchangeType?: string;
  @RoutingKey() routingKey?: string;
}

/** `POST /sink/nats`. */
export class NatsSinkDto extends InstanceSinkDto {
  @SubjectPrefix() subjectPrefix?: string;
  @Stream() stream?: string;
}

/** `POST /sink/kafka`. */
export class KafkaSinkDto extends InstanceSinkDto {
  @Topic() topic?: string;
}

/** `POST /globalsink/rabbitmq`: the one RabbitMQ sink of every instance; its URL and events are required. */
export class GlobalRabbitMqSinkDto extends DeliveryFilterDto {
  @RequiredSinkUrl() url!: string;
  @RequiredEvents() events!: string[];
  @Exchange() exchange?: string;
  @ExchangeType() exchangeType?: string;
  @RoutingKey() routingKey?: string;
}

/** `POST /globalsink/nats`. */
export class GlobalNatsSinkDto extends DeliveryFilterDto {
  @RequiredSinkUrl() url!: string;
  @RequiredEvents() events!: string[];
  @SubjectPrefix() subjectPrefix?: string;
  @Stream() stream?: string;
}

/** `POST /globalsink/kafka`. */
export class GlobalKafkaSinkDto extends DeliveryFilterDto {
  @RequiredSinkUrl() url!: string;
  @RequiredEvents() events!: string[];
  @Topic() topic?: string;
}

export type AnySinkDto = Partial<RabbitMqSinkDto & NatsSinkDto & KafkaSinkDto>;
