import type { InstanceOp, InstanceRpc } from '@gw/contracts';
import type { ChatRepository, FileRepository, InstanceRepository, SendLimitRepository } from '@gw/persistence';
import { inSpan, type Logger, tracingEnabled } from '@gw/platform';
import type { SimulatorSeam } from '../config/session-worker.config';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { MediaSource } from '../outbound/media-source';
import type { SendContentBuilder } from '../outbound/send-content';
import type { SendLedger } from '../outbound/send-ledger';
import type { Session } from '../session/session';
import { blocklistOps, blocklistRequests } from './blocklist.ops';
import { businessOps, businessRequests } from './business.ops';
import { callOps, callRequests } from './call.ops';
import { chatOps, chatRequests } from './chat.ops';
import { quickReplyOps, quickReplyRequests } from './quick-reply.ops';
import { communityOps, communityRequests } from './community.ops';
import { contactOps, contactRequests } from './contact.ops';
import { groupOps, groupRequests } from './group.ops';
import { instanceOps, instanceRequests } from './instance.ops';
import { labelOps, labelRequests } from './label.ops';
import { historyOps, historyRequests } from './history.ops';
import { mediaOps, mediaRequests } from './media.ops';
import { messageOps, messageRequests } from './message.ops';
import { newsletterOps, newsletterRequests } from './newsletter.ops';
import { privacyOps, privacyRequests } from './privacy.ops';
import { profileOps, profileRequests } from './profile.ops';
import type { OpRegistry, OpRequestParsers } from './op-handler';
import { sendOps, sendRequests, type SendOpsDependencies } from './send.ops';

/** How each op's request is read from the bus, one parser per op of the contract. */
const OP_REQUESTS = {
  ...instanceRequests,
  ...privacyRequests,
  ...sendRequests,
  ...messageRequests,
  ...mediaRequests,
  ...historyRequests,
  ...labelRequests,
  ...chatRequests,
  ...blocklistRequests,
  ...groupRequests,
  ...communityRequests,
  ...newsletterRequests,
  ...contactRequests,
  ...businessRequests,
  ...callRequests,
  ...quickReplyRequests,
  ...profileRequests,
} satisfies OpRequestParsers<InstanceOp>;

export interface OpRegistryDependencies {
  ledger: SendLedger;
  builder: SendContentBuilder;
  chats: ChatRepository;
  /** WhatsApp's limits on new chats, per instance (send.ops records the one a refusal reveals). */
  limits?: SendLimitRepository;
  files: FileRepository;
  instances: InstanceRepository;
  inbound: InboundMessageObserver;
  logger: Logger;
  simulator?: SimulatorSeam;
  /** Pictures by URL or staged upload (group and channel pictures). */
  media?: MediaSource;
  /** The send path's waits (SendOpsDependencies). */
  config: SendOpsDependencies['config'];
}

/** The worker's one op registry: every op of `InstanceRpc`, from one file per op family (named like the gateway's API areas). */
export function createOpRegistry(dependencies: OpRegistryDependencies, overrides: Partial<OpRegistry> = {}): OpRegistry {
  return {
    ...instanceOps,
    ...privacyOps,
    ...sendOps(dependencies),
    ...messageOps(),
    ...mediaOps(dependencies),
    ...historyOps(dependencies.inbound),
    ...labelOps(dependencies.inbound),
    ...chatOps(dependencies.inbound),
    ...blocklistOps(dependencies.inbound),
    ...groupOps(dependencies.media, dependencies.inbound.groupMetadata),
    ...communityOps(dependencies.inbound.groupMetadata),
    ...newsletterOps(dependencies.media),
    ...contactOps(dependencies.inbound),
    ...businessOps,
    ...callOps(dependencies.inbound),
    ...quickReplyOps(dependencies.inbound),
    ...profileOps(dependencies.inbound, dependencies.media),
    ...overrides,
  } satisfies OpRegistry;
}

/** Whether the last part of an `instance.<id>.<op>` subject names an op of the contract. */
export function isInstanceOp(op: string): op is InstanceOp {
  return Object.hasOwn(OP_REQUESTS, op);
}

/**
 * Reads the op's request from what arrived over the bus (BadRequest when malformed) and runs its handler,
 * in an `op <name>` span of the session worker when tracing is on (a child of the bus handler's span).
 */
export async function runOp<Op extends InstanceOp>(
  registry: OpRegistry,
  op: Op,
  session: Session,
  raw: Record<string, unknown>,
): Promise<InstanceRpc[Op]['reply']> {
  const request = OP_REQUESTS[op](raw, session.instanceId);
  if (!tracingEnabled()) return registry[op](session, request);
  return inSpan('session-worker', `op ${op}`, { attributes: { 'wa.instance.id': session.instanceId } }, () => registry[op](session, request));
}
