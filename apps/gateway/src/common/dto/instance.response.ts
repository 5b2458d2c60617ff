import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** An instance as uazapi returns it (instance/create, instance/status, instance/all…): every field of InstanceRecord, always answered. */
@ApiSchema({ name: 'Instance', description: 'A WhatsApp instance (one connected number) and its settings' })
export class InstanceResponse {
  @ApiProperty({ description: "The instance's id, made by the gateway" })
  id!: string;
  @ApiProperty({ description: "The instance's token (what the `token` header takes)" })
  token!: string;
  @ApiProperty({
    enum: ['disconnected', 'connecting', 'connected', 'hibernated'],
    description:
      'The connection now; hibernated (uazapi 2.1.1): session paused, credentials preserved for reconnection (`/instance/connect` wakes it without a QR code)',
  })
  status!: 'disconnected' | 'connecting' | 'connected' | 'hibernated';
  @ApiProperty({ description: 'The pairing code to type on the phone, while pairing by code' })
  paircode!: string;
  @ApiProperty({ description: 'The QR code to scan, as data:image/png;base64,… while pairing' })
  qrcode!: string;
  @ApiProperty({ description: "The instance's name" })
  name!: string;
  @ApiProperty({ description: "The WhatsApp profile's name" })
  profileName!: string;
  @ApiProperty({ description: "The WhatsApp profile picture's URL" })
  profilePicUrl!: string;
  @ApiProperty({ description: 'The account is a WhatsApp Business one' })
  isBusiness!: boolean;
  @ApiProperty({ description: "The phone's platform (android, ios, web…), spelt as uazapiGO does" })
  plataform!: string;
  @ApiProperty({ description: 'The name of the system that created the instance' })
  systemName!: string;
  @ApiProperty({ description: "The instance's phone number, once paired" })
  owner!: string;
  @ApiPropertyOptional({ enum: ['available', 'unavailable'], description: "The instance's presence now (not stored)" })
  current_presence?: 'available' | 'unavailable';
  @ApiProperty({ enum: ['available', 'unavailable'], description: 'What this gateway answers (the reference spells it current_presence)' })
  currentPresence!: string;
  @ApiProperty({ type: 'integer', description: 'The least pause between two queued sends, in seconds' })
  msg_delay_min!: number;
  @ApiProperty({ type: 'integer', description: 'The longest pause between two queued sends, in seconds' })
  msg_delay_max!: number;
  @ApiProperty({ description: 'When the instance last disconnected' })
  lastDisconnect!: string;
  @ApiProperty({ description: 'Why the instance last disconnected' })
  lastDisconnectReason!: string;
  @ApiProperty({ description: "The operator's administrative field 01" })
  adminField01!: string;
  @ApiProperty({ description: "The operator's administrative field 02" })
  adminField02!: string;
  @ApiProperty({ description: "The OpenAI API key of the instance's chatbot" })
  openai_apikey!: string;
  @ApiProperty({ description: 'The automatic chatbot is on' })
  chatbot_enabled!: boolean;
  @ApiProperty({ description: 'The chatbot ignores group messages' })
  chatbot_ignoreGroups!: boolean;
  @ApiProperty({ description: 'The keyword that stops the chatbot in a conversation' })
  chatbot_stopConversation!: string;
  @ApiProperty({ type: 'integer', description: 'How long the chatbot stays paused after the stop keyword, in minutes' })
  chatbot_stopMinutes!: number;
  @ApiProperty({ type: 'integer', description: 'How long a conversation stays paused after the phone sends a message by hand, in minutes' })
  chatbot_stopWhenYouSendMsg!: number;
  @ApiProperty({ type: 'object', additionalProperties: true, description: "The names of the chats' custom lead fields (`customField01`…)" })
  fieldsMap!: Record<string, string>;
  @ApiProperty({ description: "The server's time now" })
  currentTime!: string;
  @ApiProperty({ format: 'date-time', description: 'When the instance was created' })
  created!: string;
  @ApiProperty({ format: 'date-time', description: 'When the instance last changed' })
  updated!: string;
}

/** `POST /instance/updateDelaySettings` and the other answers carrying the instance alone. */
@ApiSchema({ name: 'InstanceWrapped', description: 'The instance, after the change' })
export class InstanceWrappedResponse {
  @ApiProperty({ type: () => InstanceResponse, description: 'The instance, after the change' })
  instance!: InstanceResponse;
}
