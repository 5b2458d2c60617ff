export { BrokerUrlError, checkBrokerHosts, checkedBrokerAddresses, displayBrokerUrl, parseBrokerUrl } from './broker-url';
export type { BrokerUrl } from './broker-url';
export { ConnectionPool, SINK_CONNECTION_IDLE_MS } from './connection-pool';
export { HttpTransport } from './http.transport';
export { KAFKA_SINK_DEFAULTS, kafkaClientConfig, kafkaRecord, kafkaSinkOptions, KafkaTransport } from './kafka.transport';
export type { KafkaSinkOptions } from './kafka.transport';
export {
  NATS_SINK_DEFAULTS,
  natsPublication,
  natsSinkOptions,
  natsStreamConfig,
  NatsTransport,
  RESERVED_SUBJECT_ROOTS,
  subjectPrefixProblem,
} from './nats.transport';
export type { NatsSinkOptions } from './nats.transport';
export { RABBITMQ_DEFAULTS, RABBITMQ_EXCHANGE_TYPES, rabbitMqOptions, rabbitMqPublication, RabbitMqTransport } from './rabbitmq.transport';
export type { RabbitMqOptions } from './rabbitmq.transport';
export type { SendOutcome, SinkMessage, SinkTransport } from './transport';
