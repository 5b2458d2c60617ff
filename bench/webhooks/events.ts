/** The events both sides deliver: the same bodies, spread over instances and chats. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CHATS, INSTANCES, PAYLOAD, type Phase } from './options';

export interface EventPayload {
  EventType: 'messages';
  phase: Phase;
  seq: number;
  lane: string;
  createdAt: number;
  instanceName: string;
  owner: string;
  message: Record<string, unknown>;
  chat?: Record<string, unknown>;
}

/** A real `messages` event (a received text), whose chat and message fields `--payload captured` events carry. */
const captured = PAYLOAD === 'captured' ? readCapture() : null;

function readCapture(): { chat: Record<string, unknown>; message: Record<string, unknown>; rest: Record<string, unknown> } {
  const path = resolve(process.cwd(), 'libs/testing/fixtures/webhook-captures/messages/user-chat/from-others/text.sent.json');
  // BaseUrl is added by the sender (the relay, or the bare client as the relay does).
  const { BaseUrl: _baseUrl, chat, message, ...rest } = JSON.parse(readFileSync(path, 'utf8')) as Record<string, Record<string, unknown>>;
  return { chat, message, rest };
}

/** The n-th event of a phase: round-robin over instances, then chats, so every lane gets traffic. */
export function eventFor(phase: Phase, seq: number, createdAt: number): { instance: number; chat: string; payload: EventPayload } {
  const instance = seq % INSTANCES;
  const chat = `55119${String(Math.floor(seq / INSTANCES) % CHATS).padStart(8, '0')}@s.whatsapp.net`;
  return {
    instance,
    chat,
    payload: {
      ...captured?.rest,
      EventType: 'messages',
      phase,
      seq,
      lane: `${instance}|${chat}`,
      createdAt,
      instanceName: `bench-${instance}`,
      owner: '5511988887777',
      message: {
        ...captured?.message,
        chatid: chat,
        messageid: `3EB0${seq.toString(16).toUpperCase().padStart(16, '0')}`,
        fromMe: false,
        messageType: 'Conversation',
        text: `bench message ${seq} of ${phase}`,
        messageTimestamp: createdAt,
        sender: chat,
        senderName: 'Bench',
      },
      ...(captured ? { chat: { ...captured.chat, wa_chatid: chat, wa_lastMessageTextVote: `bench message ${seq} of ${phase}` } } : {}),
    },
  };
}
