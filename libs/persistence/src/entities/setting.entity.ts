import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Service-wide settings (e.g. the admin token's hash). */
@Entity({ name: 'settings' })
export class SettingEntity {
  @PrimaryColumn({ type: 'text' })
  key!: string;

  @Column({ type: 'text' })
  value!: string;
}
