import type { SchemaObject } from '@nestjs/swagger';
import { IsDefined, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import type { InstanceRecord } from '@gw/contracts';

/** A passphrase shorter than this protects nothing once the bundle leaks: the bundle holds the account. */
export const MIN_PASSPHRASE = 12;

export class ExportSessionDto {
  @IsDefined({ message: 'passphrase is required' })
  @IsString()
  @MinLength(MIN_PASSPHRASE, { message: `passphrase must have at least ${MIN_PASSPHRASE} characters` })
  @MaxLength(1024)
  @JSONSchema({
    description: `The passphrase the bundle is encrypted with (at least ${MIN_PASSPHRASE} characters; a few random words are best). It is not stored: without it the bundle cannot be imported`,
  })
  passphrase!: string;
}

export class ImportSessionDto {
  @IsDefined({ message: 'bundle is required' })
  @IsString()
  @MinLength(1, { message: 'bundle is required' })
  @JSONSchema({ description: 'The `bundle` that `POST /instance/export` answered on the other server, as it was (`gwsession1.…`)' })
  bundle!: string;

  @IsDefined({ message: 'passphrase is required' })
  @IsString()
  @MinLength(1, { message: 'passphrase is required' })
  @MaxLength(1024)
  @JSONSchema({ description: 'The passphrase the bundle was exported with' })
  passphrase!: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @JSONSchema({ description: "A name for the new instance; default: the exported instance's name" })
  name?: string;
}

/** `POST /instance/export`'s answer. */
export interface SessionExported {
  response: 'Session exported';
  bundle: string;
  instance: InstanceRecord;
  info: string;
}

/** `POST /instance/import`'s answer. */
export interface SessionImported {
  response: 'Session imported';
  instance: InstanceRecord;
  token: string;
  connected: false;
  loggedIn: false;
  jid: string;
  info: string;
}

const INSTANCE_REF = { $ref: '#/components/schemas/Instance' } as SchemaObject;

export const SESSION_EXPORTED_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['response', 'bundle', 'instance', 'info'],
  properties: {
    response: { type: 'string', enum: ['Session exported'], description: 'What was done' },
    bundle: {
      type: 'string',
      pattern: '^gwsession1\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
      description:
        "The encrypted session: the linked device's credentials and the instance's settings (webhooks and sinks with their secrets, proxy, chatbot, Chatwoot, delays, fields map). Give it, with the passphrase, to `POST /instance/import` on the new server; it is the only copy",
    },
    instance: { ...INSTANCE_REF, description: 'This instance as it stays here: disconnected, without credentials; connecting it is refused' } as SchemaObject,
    info: { type: 'string', description: 'What to do next' },
  },
};

export const SESSION_IMPORTED_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['response', 'instance', 'token', 'connected', 'loggedIn', 'jid', 'info'],
  properties: {
    response: { type: 'string', enum: ['Session imported'], description: 'What was done' },
    instance: { ...INSTANCE_REF, description: 'The new instance: disconnected, with the linked device of the bundle' } as SchemaObject,
    token: { type: 'string', description: "The new instance's token (a new one: the old server's token is not carried over)" },
    connected: { type: 'boolean', enum: [false], description: 'Always false: `POST /instance/connect` connects it, without a QR code' },
    loggedIn: { type: 'boolean', enum: [false], description: 'Always false until it is connected' },
    jid: { type: 'string', description: 'The linked device (`user:device@s.whatsapp.net`) the bundle carried' },
    info: { type: 'string', description: 'What to do next' },
  },
};
