import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { RABBITMQ_EXCHANGE_TYPES } from '@gw/relay';

/** The brokers an event sink publishes to. */
export const SINK_KINDS = ['rabbitmq', 'nats', 'kafka'] as const;

/** An event sink to a message broker (`/sink/<kind>`, `/globalsink/<kind>`): the webhook's filters, the broker and its options. */
@ApiSchema({
  name: 'Sink',
  description:
    "An event sink: the instance's (or, global, every instance's) events published to a message broker, filtered by `events` and `excludeMessages` as a webhook's",
})
export class SinkResponse {
  @ApiProperty({ description: "The sink's id (`env-<kind>` for a global sink the environment names)" })
  id!: string;
  @ApiProperty({ enum: SINK_KINDS, description: 'The broker: RabbitMQ, NATS or Kafka' })
  kind!: (typeof SINK_KINDS)[number];
  @ApiProperty({ description: 'Publications are on' })
  enabled!: boolean;
  @ApiProperty({ description: 'The broker (amqp://, nats://, kafka://…), its password masked' })
  url!: string;
  @ApiProperty({ type: [String], description: 'The events it receives (`messages`, `connection`…; every event when empty)' })
  events!: string[];
  @ApiProperty({ type: [String], description: 'The messages it leaves out (e.g. `wasSentByApi`, against loops)' })
  excludeMessages!: string[];
  @ApiProperty({ description: "The instance's token is sent with each event" })
  includeToken!: boolean;
  @ApiPropertyOptional({ description: 'RabbitMQ: the durable exchange published to ("" = the default exchange)', example: 'wa-gateway' })
  exchange?: string;
  @ApiPropertyOptional({ enum: RABBITMQ_EXCHANGE_TYPES, description: "RabbitMQ: the exchange's type (declared so when missing)" })
  exchangeType?: (typeof RABBITMQ_EXCHANGE_TYPES)[number];
  @ApiPropertyOptional({ description: 'RabbitMQ: the routing key; {instance}, {instanceName} and {event} are filled in', example: '{instance}.{event}' })
  routingKey?: string;
  @ApiPropertyOptional({ description: 'NATS: events go to <subjectPrefix>.<instance>.<event>', example: 'wa-gateway.events' })
  subjectPrefix?: string;
  @ApiPropertyOptional({ description: 'NATS: the JetStream stream keeping them (created when missing)', example: 'WA_GATEWAY_EVENTS' })
  stream?: string;
  @ApiPropertyOptional({ description: 'Kafka: the topic; records are keyed by instance', example: 'wa-gateway-events' })
  topic?: string;
  @ApiPropertyOptional({ description: 'Why publications stopped (e.g. failing for too long)' })
  disabledReason?: string;
  @ApiPropertyOptional({ description: "The instance's id (absent on a global sink)" })
  instance_id?: string;
  @ApiPropertyOptional({ enum: ['api', 'env'], description: 'A global sink: configured through the API or by the environment (RABBITMQ_URL…)' })
  source?: 'api' | 'env';
  @ApiProperty({ format: 'date-time', description: 'When the sink was created' })
  created!: string;
  @ApiProperty({ format: 'date-time', description: 'When the sink last changed' })
  updated!: string;
}
