export {
  buildButtonMenu,
  buildCarousel,
  buildListMenu,
  buildLocationRequest,
  buildNativeFlow,
  buildPaymentRequest,
  buildPixButton,
  buildPoll,
  InteractiveError,
  isPixKeyType,
  listNodes,
  money,
  nativeFlowButton,
  nativeFlowNodes,
  PIX_KEY_TYPES,
  pollCreationNodes,
  pollVoteNodes,
} from './builders';
export type { BuiltInteractive, NativeFlowButton, NodeJson, PaymentItem, PaymentRequestInput, PixKeyType, ProtoJson } from './builders';
export {
  buildOptionReply,
  buildPollVote,
  encodePollVote,
  encryptPollVote,
  interactiveOriginal,
  pollOptionHash,
  selectOption,
  selectPollOption,
} from './replies';
export type { InteractiveOriginal, PollVoteContext, QuotedContext, ReplyOption } from './replies';
