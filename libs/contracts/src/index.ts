export { ErrorCode, RpcError, isRpcErrorBody, assertUnreachable } from './errors';
export type { RpcErrorBody } from './errors';
export { BROWSER_CHOICES } from './instance';
export type { BrowserChoice, BrowserProfile, HistoryRequest, InstanceRecord, InstanceStatus, JidObject } from './instance';
export { Subjects } from './subjects';
export type {
  ConnectReply,
  ConnectRequest,
  InstanceOp,
  InstanceRpc,
  OutboxNotice,
  PlaceRequest,
  PresenceRequest,
  PrivacySettings,
  QueueNotice,
  StatusReply,
} from './subjects';
export { EVENT_TYPES } from './events';
export type {
  ChatsEventPayload,
  ConnectionEventPayload,
  ContactEventRecord,
  ContactsEventPayload,
  EventType,
  MessagesEventPayload,
  MessagesUpdateEventPayload,
  MessageUpdateState,
} from './events';
export type { ChatPresenceRequest, LinkPreviewData, MediaKind, OutboundContent, ProtoAttachment, SendRecordFields, SendRequest } from './send';
