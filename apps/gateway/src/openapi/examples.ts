/**
 * Example bodies of the routes' answers (`@ApiReply(…, { example })`): the reference's examples where it
 * has one, else what the e2e specs assert, with made-up ids.
 */

// The shared answers' examples sit beside their classes (common/dto); the areas not converted yet import them from here.
export {
  CHAT_EXAMPLE,
  CHAT_TOTALS_EXAMPLE,
  DISCONNECTED_INSTANCE_EXAMPLE,
  INSTANCE_EXAMPLE,
  MESSAGE_EXAMPLE,
  WEBHOOK_ERROR_EXAMPLE,
} from '../common/dto/common.examples';
