export { Bus, runHandler, subjectMatches, unwrapReply } from './bus';
export type { BusHandler, BusSubscription, ReplyEnvelope, RequestOptions, SubscribeOptions } from './bus';
export { InProcessBus } from './in-process-bus';
export { ConnectionLostError, NatsBus } from './nats-bus';
export { BusContext, BusTransportStrategy, PassThroughRpcFilter } from './bus-transport.strategy';
