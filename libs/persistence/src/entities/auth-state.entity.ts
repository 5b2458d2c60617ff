import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Baileys credentials of one instance, serialised with BufferJSON. */
@Entity({ name: 'auth_creds' })
export class AuthCredsEntity {
  @PrimaryColumn({ name: 'instance_id', type: 'text' })
  instanceId!: string;

  @Column({ type: 'text' })
  value!: string;
}

/** Baileys Signal keys (pre-key, session, sender-key, app-state-sync-key, lid-mapping, …). */
@Entity({ name: 'auth_keys' })
export class AuthKeyEntity {
  @PrimaryColumn({ name: 'instance_id', type: 'text' })
  instanceId!: string;

  @PrimaryColumn({ type: 'text' })
  type!: string;

  @PrimaryColumn({ name: 'key_id', type: 'text' })
  keyId!: string;

  @Column({ type: 'text' })
  value!: string;
}
