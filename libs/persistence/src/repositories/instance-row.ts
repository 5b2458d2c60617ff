import type { DesiredState, ProxySettings } from '../entities/instance.entity';

/**
 * An instance's row as plain, read-only data: what code outside persistence names when it reads an
 * instance the repository returned (issue #37: the TypeORM entity, InstanceEntity, stays inside). The
 * entity implements it: a field missing there or typed differently does not compile.
 */
export interface InstanceRow {
  readonly id: string;
  readonly token: string;
  readonly name: string;
  readonly status: 'disconnected' | 'connecting' | 'connected' | 'hibernated';
  readonly desiredState: DesiredState;
  readonly paired: boolean;
  readonly paircode: string;
  readonly qrcode: string;
  readonly pairingExpiresAt: Date | null;
  readonly profileName: string;
  readonly profilePicUrl: string;
  readonly isBusiness: boolean;
  readonly platform: string;
  readonly systemName: string;
  readonly browser: string;
  readonly owner: string;
  readonly jid: string;
  readonly lid: string;
  readonly lastDisconnect: Date | null;
  readonly lastDisconnectReason: string;
  readonly adminField01: string;
  readonly adminField02: string;
  readonly openaiApikey: string;
  readonly chatbotEnabled: boolean;
  readonly chatbotIgnoreGroups: boolean;
  readonly chatbotStopConversation: string;
  readonly chatbotStopMinutes: number;
  readonly chatbotStopWhenYouSendMsg: number;
  readonly fieldsMap: Readonly<Record<string, string>>;
  readonly msgDelayMin: number;
  readonly msgDelayMax: number;
  readonly currentPresence: string;
  readonly historyDays: number;
  readonly historyFullSync: boolean;
  readonly pairingRequestId: string;
  readonly proxy: Readonly<ProxySettings> | null;
  readonly exportedAt: Date | null;
  readonly created: Date;
  readonly updated: Date;
}
