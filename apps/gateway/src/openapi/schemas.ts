import type { SchemaObject } from '@nestjs/swagger';

/**
 * Response schemas several routes share, named as uazapiGO's reference names them
 * (components.schemas there). A route points at one with `@ApiReply(SCHEMAS.Message)`; the document
 * lists each once under components.schemas and refers to it.
 */
const str = (extra: SchemaObject = {}): SchemaObject => ({ type: 'string', ...extra });
const bool: SchemaObject = { type: 'boolean' };
const int: SchemaObject = { type: 'integer' };

/** A reusable response schema: its component name and its shape. */
export interface NamedSchema {
  readonly name: string;
  readonly schema: SchemaObject;
}

const named = (name: string, schema: SchemaObject): NamedSchema => ({ name, schema });

export const SCHEMAS = {
  /** An instance as uazapi returns it (instance/create, instance/status, instance/all…). */
  Instance: named('Instance', {
    type: 'object',
    properties: {
      id: str(),
      token: str(),
      status: str({ description: 'disconnected, connecting or connected' }),
      paircode: str(),
      qrcode: str({ description: 'data:image/png;base64,… while pairing' }),
      name: str(),
      profileName: str(),
      profilePicUrl: str(),
      isBusiness: bool,
      plataform: str(),
      systemName: str(),
      owner: str(),
      current_presence: str({ enum: ['available', 'unavailable'] }),
      lastDisconnect: str(),
      lastDisconnectReason: str(),
      adminField01: str(),
      adminField02: str(),
      openai_apikey: str(),
      chatbot_enabled: bool,
      chatbot_ignoreGroups: bool,
      chatbot_stopConversation: str(),
      chatbot_stopMinutes: int,
      chatbot_stopWhenYouSendMsg: int,
      fieldsMap: { type: 'object', additionalProperties: true },
      currentTime: str(),
      created: str({ format: 'date-time' }),
      updated: str({ format: 'date-time' }),
    },
  }),
  /** A message record (send/*, message/find, webhooks' `message`). */
  Message: named('Message', {
    type: 'object',
    properties: {
      id: str(),
      messageid: str(),
      chatid: str(),
      sender: str(),
      senderName: str(),
      isGroup: bool,
      fromMe: bool,
      messageType: str(),
      source: str(),
      messageTimestamp: int,
      status: str(),
      text: str(),
      quoted: str(),
      edited: str(),
      reaction: str(),
      vote: str(),
      convertOptions: str(),
      buttonOrListid: str(),
      owner: str(),
      error: str(),
      content: {},
      wasSentByApi: bool,
      sendFunction: str(),
      sendPayload: {},
      fileURL: str(),
      send_folder_id: str(),
      track_source: str(),
      track_id: str(),
      sender_pn: str(),
      sender_lid: str(),
    },
  }),
  /** A webhook's configuration. */
  Webhook: named('Webhook', {
    type: 'object',
    properties: {
      id: str(),
      enabled: bool,
      url: str(),
      events: { type: 'array', items: str() },
      addUrlTypesMessages: bool,
      addUrlEvents: bool,
      excludeMessages: { type: 'array', items: str() },
    },
  }),
  /** A label. */
  Label: named('Label', {
    type: 'object',
    properties: { id: str(), name: str(), color: int, colorHex: str(), labelid: str(), owner: str(), created: str(), updated: str() },
  }),
  /** The plain acknowledgement many actions answer with. */
  Response: named('Response', {
    type: 'object',
    required: ['response'],
    properties: { response: str({ description: 'What was done', example: 'Chat presence sent successfully' }) },
  }),
  /** `GET /health`: the process answers. */
  Liveness: named('Liveness', { type: 'object', required: ['status'], properties: { status: str({ enum: ['ok'] }) } }),
  /** `GET /ready`: each check by name, `ok` or why it failed; the in-process bus is named as such (`bus: in-process`), not checked. */
  Readiness: named('Readiness', {
    type: 'object',
    required: ['status', 'checks'],
    properties: {
      status: str({ enum: ['ok', 'unavailable'] }),
      checks: {
        type: 'object',
        properties: { postgres: str(), nats: str(), bus: str({ enum: ['in-process'] }) },
        additionalProperties: str(),
      },
    },
  }),
  /** Every error: `{error}`, the catalogue's `code` where uazapi has one, and the thrower's extra fields. */
  Error: named('Error', {
    type: 'object',
    required: ['error'],
    properties: { error: str(), code: str() },
    additionalProperties: true,
  }),
  /** The default for a route that has not declared its answer yet: some JSON object. */
  Object: named('GenericObject', { type: 'object', additionalProperties: true }),
} as const satisfies Record<string, NamedSchema>;
