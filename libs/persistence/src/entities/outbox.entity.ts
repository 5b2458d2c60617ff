import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** Every event, written in the transaction of the state change that caused it. */
@Entity({ name: 'outbox_events' })
@Index(['instanceId', 'id'])
export class OutboxEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'instance_id', type: 'text' })
  instanceId!: string;

  @Column({ name: 'event_type', type: 'text' })
  eventType!: string;

  /** Chat the event belongs to, for per-chat ordering of deliveries ('' when none). */
  @Column({ name: 'chat_id', type: 'text', default: '' })
  chatId!: string;

  @Column({ type: 'jsonb' })
  payload!: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Set once the webhook relay has created this event's deliveries. */
  @Column({ name: 'dispatched_at', type: 'timestamptz', nullable: true })
  dispatchedAt!: Date | null;
}
