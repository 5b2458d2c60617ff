export { ErrorCode, RpcError, isRpcErrorBody, assertUnreachable } from './errors';
export type { RpcErrorBody } from './errors';
export { BROWSER_CHOICES } from './instance';
export type { BrowserChoice, BrowserProfile, HistoryRequest, InstanceRecord, InstanceStatus, JidObject } from './instance';
export type { MessageCallPeer, MessageRecord, SendReply, StatusSendFields } from './message';
export { PRIVACY_SETTING_VALUES, PRIVACY_SETTINGS, Subjects, heldRequestKey, privacySettingsOf } from './subjects';
export type {
  ConnectReply,
  ConnectRequest,
  HolderRejoined,
  InstanceOp,
  InstanceRpc,
  LeasesHandedOver,
  OutboxNotice,
  PlaceRequest,
  PresenceRequest,
  PrivacyAudience,
  PrivacySettings,
  StatusPrivacy,
  QueueNotice,
  StatusReply,
} from './subjects';
export { EVENT_TYPES, LEGACY_EVENT_TYPES, messagesUpdatePayload } from './events';
export type {
  BlockChangeRecord,
  BlocksEventPayload,
  CallEventPayload,
  ChatLabelsEventPayload,
  ChatsEventPayload,
  ConnectionEventPayload,
  ContactEventRecord,
  ContactsEventPayload,
  EventType,
  GroupChangeEvent,
  GroupsEventPayload,
  HistoryEventPayload,
  JoinedGroupEvent,
  JoinedGroupParticipant,
  LabelsEventPayload,
  MessagesEventPayload,
  MessagesUpdateEventPayload,
  MessagesUpdateFacts,
  MessageUpdateState,
  MessageUpdateType,
  NewsletterMessagesEventPayload,
  PresenceEventPayload,
  PresenceState,
  SenderEventPayload,
  WebhookEventPayload,
} from './events';
export type { BlockRequest, BlocklistReply, ChatLabelsRequest, LabelEditRequest, LabelRefreshReply, LabelRefreshRequest } from './contact-state';
export type {
  ChatPresenceRequest,
  HistoryOnDemandRequest,
  LinkPreviewData,
  MediaKind,
  OutboundContent,
  ProtoAttachment,
  SendRecordFields,
  SendRequest,
  StatusBroadcast,
  WireNode,
} from './send';
export type { ContactCheckRequest, ContactCheckResult, ContactRemoveRequest, ContactSaveRequest } from './contact';
export type {
  BusinessCategoryRecord,
  BusinessFieldResult,
  BusinessProfileField,
  BusinessProfileRecord,
  BusinessProfileUpdateReply,
  CallOfferRequest,
  CallRejectRequest,
  CatalogProduct,
  CatalogReply,
  InstanceResetReply,
  QuickReplySaveRequest,
  WaMessageLimitsReply,
  WhatsAppQuickReply,
} from './business';
