/** The events both sides deliver: the same bodies, spread over instances and chats. */
import { CHATS, INSTANCES, type Phase } from './options';

export interface EventPayload {
  EventType: 'messages';
  phase: Phase;
  seq: number;
  lane: string;
  createdAt: number;
  instanceName: string;
  owner: string;
  message: Record<string, unknown>;
}

/** The n-th event of a phase: round-robin over instances, then chats, so every lane gets traffic. */
export function eventFor(phase: Phase, seq: number, createdAt: number): { instance: number; chat: string; payload: EventPayload } {
  const instance = seq % INSTANCES;
  const chat = `55119${String(Math.floor(seq / INSTANCES) % CHATS).padStart(8, '0')}@s.whatsapp.net`;
  return {
    instance,
    chat,
    payload: {
      EventType: 'messages',
      phase,
      seq,
      lane: `${instance}|${chat}`,
      createdAt,
      instanceName: `bench-${instance}`,
      owner: '5511988887777',
      message: {
        chatid: chat,
        messageid: `3EB0${seq.toString(16).toUpperCase().padStart(16, '0')}`,
        fromMe: false,
        messageType: 'Conversation',
        text: `bench message ${seq} of ${phase}`,
        messageTimestamp: createdAt,
        sender: chat,
        senderName: 'Bench',
      },
    },
  };
}
