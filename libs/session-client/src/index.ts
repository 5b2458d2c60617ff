// Public entry of @gw/session-client: requests to whichever session worker holds an instance, across a
// takeover (ADR 0007, ADR 0012). Used by the gateway (SessionClient) and the async queue's dispatcher.
export { HOLDER_CHECK_MS, HolderRejoinedError, LOST_AFTER_CHECKS, RequestLostError, TAKEOVER_RETRY_MS, TakeoverRequester } from './takeover-requester';
export type { TakeoverRequesterOptions } from './takeover-requester';
