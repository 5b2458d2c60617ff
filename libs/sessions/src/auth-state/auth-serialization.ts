import { BufferJSON, proto, type AuthenticationCreds, type SignalKeyType } from '../baileys';

/** Creds and keys are stored as JSON text; Buffers/Uint8Arrays travel as `{type:'Buffer', data:<base64>}`. */
export function serializeAuthValue(value: unknown): string {
  return JSON.stringify(value, BufferJSON.replacer);
}

export function deserializeCreds(text: string): AuthenticationCreds {
  return JSON.parse(text, BufferJSON.reviver) as AuthenticationCreds;
}

/** App-state sync keys are protobuf messages in memory; everything else is plain data. */
export function deserializeKey(type: SignalKeyType, text: string): unknown {
  const value: unknown = JSON.parse(text, BufferJSON.reviver);
  if (type === 'app-state-sync-key' && value && typeof value === 'object') {
    return proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>);
  }
  return value;
}
