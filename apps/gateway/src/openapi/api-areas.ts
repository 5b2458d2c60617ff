import { ApiTags } from '@nestjs/swagger';

/**
 * The API's areas, the closed list of the document's tags: uazapiGO's reference tags in English (its
 * "Groups and communities" and "Newsletters and channels" stay one area each), then the areas the
 * reference has no tag for (chatbot, event sinks, the service's own routes). Every operation carries
 * exactly one, from its controller (`@ApiArea`) or, where a controller serves several areas, its handler.
 */
export const API_AREAS = {
  Admin: 'Administration with the `admintoken`: create and list instances, their admin fields, the global webhook, restart, token rotation',
  Instance: "An instance's lifecycle: connect (QR code or pairing code), status, disconnect, hibernate, delete, presence and privacy",
  Proxy: "The proxy an instance's WhatsApp connection goes through: the managed (internal) one, your own `proxy_url`, or none",
  Profile: "The connected account's WhatsApp profile: its name and picture",
  Business: 'The WhatsApp Business profile and catalogue (experimental in uazapiGO too)',
  Calls: 'Voice calls: start one, reject an incoming one',
  'Webhooks & SSE': "Where an instance's events go: its webhooks, their recent delivery errors, and the server-sent event stream",
  'Event sinks': 'Events published to RabbitMQ, NATS or Kafka, per instance or for all of them (not in uazapiGO)',
  Send: 'Send messages: text, media, contact, location, status (stories), interactive menus, and the chat presence ("typing…")',
  'Async queue': 'The queue of sends made with `async: true`: its state, the delay between its messages, and clearing it',
  Messages: 'Act on messages already sent or received: find, download, react, edit, delete, pin, mark read, ask for history',
  Chats: 'Find chats and change them: pin, archive, read, mute, disappearing messages, notes, delete',
  Contacts: 'The address book and WhatsApp lookups: list, add and remove contacts, check numbers, full details',
  Blocks: 'Block and unblock contacts, and list the blocked ones',
  Labels: 'Labels (WhatsApp Business): list, create, edit and delete them, and label chats',
  'Groups & Communities': 'Groups (create, inspect, invite, participants, settings) and communities',
  Channels: 'WhatsApp channels (newsletters): create, follow, read, post settings, admins',
  'Quick replies': 'Canned answers stored for a front end to use; the API stores them and does not send them by itself',
  CRM: "Lead fields kept on each chat by the gateway, and the instance's names for its custom fields",
  'Mass sending': 'Campaigns: many messages to many numbers, paced, with their folders and per-message status',
  Chatwoot: 'The Chatwoot integration (beta): its configuration and the webhook Chatwoot calls back',
  Chatbot: 'The AI chatbot: agents, triggers, knowledge, functions and per-instance settings (not in uazapiGO)',
  Service: "The gateway's own routes: health, readiness and stored files (not in uazapiGO)",
} as const;

export type ApiAreaName = keyof typeof API_AREAS;

/** The operations' tag: one area of the closed list (the compiler refuses any other). */
export const ApiArea = (area: ApiAreaName): ClassDecorator & MethodDecorator => ApiTags(area);
