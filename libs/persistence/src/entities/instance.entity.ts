import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { InstanceRow } from '../repositories/instance-row';

/** Whether some worker should hold a session for the instance. */
export type DesiredState = 'connected' | 'disconnected';

export interface ProxySettings {
  mode: 'internal' | 'custom' | 'none';
  proxyUrl: string | null;
  proxyFallback: string | null;
  /** The managed proxy's place, and the pool's proxy assigned to the instance (kept while it works; never shown). */
  managed: { country?: string; state?: string; city?: string; proxyUrl?: string } | null;
  lastTestAt: string | null;
  lastTestError: string | null;
}

@Entity({ name: 'instances' })
export class InstanceEntity implements InstanceRow {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Index({ unique: true })
  @Column({ type: 'text' })
  token!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', default: 'disconnected' })
  status!: 'disconnected' | 'connecting' | 'connected' | 'hibernated';

  @Column({ name: 'desired_state', type: 'text', default: 'disconnected' })
  desiredState!: DesiredState;

  /** True once a device has been linked and credentials are stored. */
  @Column({ type: 'boolean', default: false })
  paired!: boolean;

  @Column({ type: 'text', default: '' })
  paircode!: string;

  @Column({ type: 'text', default: '' })
  qrcode!: string;

  /** When the current QR or pairing code stops being valid (2 min / 5 min). */
  @Column({ name: 'pairing_expires_at', type: 'timestamptz', nullable: true })
  pairingExpiresAt!: Date | null;

  @Column({ name: 'profile_name', type: 'text', default: '' })
  profileName!: string;

  @Column({ name: 'profile_pic_url', type: 'text', default: '' })
  profilePicUrl!: string;

  @Column({ name: 'is_business', type: 'boolean', default: false })
  isBusiness!: boolean;

  @Column({ type: 'text', default: '' })
  platform!: string;

  @Column({ name: 'system_name', type: 'text', default: '' })
  systemName!: string;

  /** The browser profile the linked device registered with (kept across reconnects). */
  @Column({ type: 'text', default: '' })
  browser!: string;

  /** Phone digits of the linked account. */
  @Column({ type: 'text', default: '' })
  owner!: string;

  /** Full device JID (`user:device@s.whatsapp.net`) and LID of the linked account. */
  @Column({ type: 'text', default: '' })
  jid!: string;

  @Column({ type: 'text', default: '' })
  lid!: string;

  @Column({ name: 'last_disconnect', type: 'timestamptz', nullable: true })
  lastDisconnect!: Date | null;

  @Column({ name: 'last_disconnect_reason', type: 'text', default: '' })
  lastDisconnectReason!: string;

  @Column({ name: 'admin_field01', type: 'text', default: '' })
  adminField01!: string;

  @Column({ name: 'admin_field02', type: 'text', default: '' })
  adminField02!: string;

  @Column({ name: 'openai_apikey', type: 'text', default: '' })
  openaiApikey!: string;

  @Column({ name: 'chatbot_enabled', type: 'boolean', default: false })
  chatbotEnabled!: boolean;

  @Column({ name: 'chatbot_ignore_groups', type: 'boolean', default: false })
  chatbotIgnoreGroups!: boolean;

  @Column({ name: 'chatbot_stop_conversation', type: 'text', default: '' })
  chatbotStopConversation!: string;

  @Column({ name: 'chatbot_stop_minutes', type: 'integer', default: 0 })
  chatbotStopMinutes!: number;

  @Column({ name: 'chatbot_stop_when_you_send_msg', type: 'integer', default: 0 })
  chatbotStopWhenYouSendMsg!: number;

  @Column({ name: 'fields_map', type: 'jsonb', default: () => "'{}'::jsonb" })
  fieldsMap!: Record<string, string>;

  @Column({ name: 'msg_delay_min', type: 'integer', default: 0 })
  msgDelayMin!: number;

  @Column({ name: 'msg_delay_max', type: 'integer', default: 0 })
  msgDelayMax!: number;

  @Column({ name: 'current_presence', type: 'text', default: 'available' })
  currentPresence!: string;

  /** Requested history for the next new pairing (`history_days` rules applied). */
  @Column({ name: 'history_days', type: 'integer', default: 90 })
  historyDays!: number;

  @Column({ name: 'history_full_sync', type: 'boolean', default: false })
  historyFullSync!: boolean;

  /** Identifies the current pairing attempt and its initial history. */
  @Column({ name: 'pairing_request_id', type: 'text', default: '' })
  pairingRequestId!: string;

  @Column({ type: 'jsonb', nullable: true })
  proxy!: ProxySettings | null;

  /** When the session was exported to another server (`POST /instance/export`): its credentials are gone and connect is refused. */
  @Column({ name: 'exported_at', type: 'timestamptz', nullable: true })
  exportedAt!: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated!: Date;
}
