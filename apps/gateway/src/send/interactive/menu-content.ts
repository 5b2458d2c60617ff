import {
  buildButtonMenu,
  buildCarousel,
  buildListMenu,
  buildPoll,
  ChoiceError,
  InteractiveError,
  parseButtons,
  parseCarousel,
  parseList,
  parsePoll,
  type BuiltInteractive,
  type MenuButton,
} from '@gw/domain';
import type { ProtoAttachment } from '@gw/contracts';

import { randomBytes } from 'node:crypto';
import { ApiError } from '../../common/api-error';
import type { BuiltContent } from '../content-builders';
import type { ContentTools } from '../send-content-tools';
import type { SendMenuDto } from './interactive.dto';
import type { RequestInstance } from '../../common/request-instance';

/** Where built interactive messages keep their header and their cards (see libs/domain interactive builders). */
export const INTERACTIVE_PATH = ['viewOnceMessage', 'message', 'interactiveMessage'];
export const CAROUSEL_CARDS_PATH = [...INTERACTIVE_PATH, 'carouselMessage', 'cards'];
const HEADER_MIME = { image: 'image/jpeg', video: 'video/mp4', document: 'application/pdf' } as const;

/** Choice and builder errors are the client's: 400 with their wording. */
export function built<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof ChoiceError || error instanceof InteractiveError) throw ApiError.badRequest(error.message);
    throw error;
  }
}

/** A header file given as a URL (fetched by the worker through the SSRF guard) or base64 (staged). */
export async function headerAttachment(
  tools: ContentTools,
  instance: RequestInstance,
  file: string,
  mediaType: ProtoAttachment['mediaType'],
  path: ProtoAttachment['path'],
  fileName = '',
): Promise<ProtoAttachment> {
  const value = file.trim();
  const mimetype = /^data:([^;,]+)/.exec(value)?.[1] ?? '';
  const source = /^https?:\/\//i.test(value)
    ? { url: value }
    : { fileId: await tools.stageFile(instance, value, mimetype || HEADER_MIME[mediaType], fileName) };
  return { path, mediaType, source, mimetype, fileName };
}

/** The content of an interactive message as relayed by the worker (a WAProto message, its nodes and header files). */
export function protoContent(message: BuiltInteractive, attachments: ProtoAttachment[] = []): BuiltContent['content'] {
  return {
    kind: 'proto',
    message: message.message,
    messageType: message.messageType,
    nodes: message.nodes,
    attachments,
  };
}

/**
 * A menu (`/send/menu` and the campaigns' button, list, poll and carousel messages): buttons, list,
 * poll or carousel built from `choices` (type, text and choices checked by SendMenuDto). Placeholders in the text are resolved now (the built
 * WAProto message carries the text; a queued menu is not rewritten when it goes out).
 */
export async function buildMenuContent(tools: ContentTools, instance: RequestInstance, chatJid: string, dto: SendMenuDto): Promise<BuiltContent> {
  const choices = dto.choices;
  const text = await tools.placeholders(instance, chatJid, dto.text);
  const footer = dto.footerText ?? '';
  let message: BuiltInteractive;
  const attachments: ProtoAttachment[] = [];
  switch (dto.type) {
    case 'poll': {
      const options = built(() => parsePoll(choices));
      message = built(() => buildPoll(text, options, dto.selectableCount ?? 1, randomBytes(32).toString('base64')));
      break;
    }
    case 'list':
      message = built(() => buildListMenu(text, parseList(choices), dto.listButton ?? dto.buttonText ?? '', footer));
      break;
    case 'carousel': {
      const cards = built(() => parseCarousel(choices));
      message = built(() => buildCarousel(text, cards, footer));
      for (const [index, card] of cards.entries()) {
        if (card.media) attachments.push(await headerAttachment(tools, instance, card.media, 'image', [...CAROUSEL_CARDS_PATH, index, 'header']));
      }
      break;
    }
    case 'button_legacy':
      message = built(() => legacyButtons(text, parseButtons(choices), footer));
      break;
    default:
      message = built(() => buildButtonMenu(text, parseButtons(choices), footer));
      if (dto.imageButton && dto.imageButton.trim())
        attachments.push(await headerAttachment(tools, instance, dto.imageButton, 'image', [...INTERACTIVE_PATH, 'header']));
  }
  return { content: protoContent(message, attachments), sendFunction: 'SendMenuMessage', payload: { ...dto, text } };
}

/** `button_legacy`: the old buttonsMessage (reply buttons only). */
function legacyButtons(text: string, buttons: MenuButton[], footer: string): BuiltInteractive {
  const invalid = buttons.find((button) => button.kind !== 'reply');
  if (invalid) throw new InteractiveError(`button_legacy takes reply buttons only ("${invalid.text}" is a ${invalid.kind} button)`);
  const replies = buttons as Array<Extract<MenuButton, { kind: 'reply' }>>;
  return {
    message: {
      buttonsMessage: {
        contentText: text,
        ...(footer ? { footerText: footer } : {}),
        headerType: 1,
        buttons: replies.map((button) => ({ buttonId: button.id, buttonText: { displayText: button.text }, type: 1 })),
      },
    },
    messageType: 'ButtonsMessage',
    nodes: [],
  };
}
