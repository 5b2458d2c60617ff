import { ErrorCode, RpcError } from '@gw/contracts';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { LABEL_ID, patchAppState, socketHandlerOf } from './socket-handler';

/** The ops of the gateway's `label/` area: the labels of the phone's app state. */
export type LabelOps = 'labels.refresh' | 'label.edit';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export const labelRequests = {
  'labels.refresh': (raw, instanceId) => {
    const requestId = typeof raw.requestId === 'string' ? raw.requestId : '';
    if (!REQUEST_ID.test(requestId)) throw new RpcError(ErrorCode.BadRequest, 'requestId must be 1 to 128 letters, digits or . _ : -');
    return { instanceId, requestId, force: raw.force === true };
  },
  'label.edit': (raw, instanceId) => {
    const labelId = typeof raw.labelId === 'string' ? raw.labelId : '';
    if (!LABEL_ID.test(labelId)) throw new RpcError(ErrorCode.BadRequest, 'labelid must be a label id');
    const color = Number(raw.color);
    if (!Number.isInteger(color) || color < 0 || color > 19) throw new RpcError(ErrorCode.BadRequest, 'color must be an integer from 0 to 19');
    return { instanceId, labelId, name: typeof raw.name === 'string' ? raw.name : '', color, deleted: raw.deleted === true };
  },
} satisfies OpRequestParsers<LabelOps>;

export function labelOps(inbound: InboundMessageObserver): OpHandlers<LabelOps> {
  return {
    'labels.refresh': async (session, request) => socketHandlerOf(inbound, session).refreshLabels(request.requestId, request.force),
    'label.edit': async (session, request) => {
      const socket = session.openSocket();
      return patchAppState(inbound, session, () =>
        socket.addLabel('', { id: request.labelId, name: request.name, color: request.color, deleted: request.deleted }),
      );
    },
  };
}
