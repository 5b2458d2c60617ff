import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** Every event, written in the transaction of the state change that caused it. */
@Entity({ name: 'outbox_events' })
@Index(['instanceId', 'tx', 'id'])
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

  /**
   * The writing transaction's id (`pg_current_xact_id()`), set by the database. Cursor readers order by
   * `(tx, id)` and only read below their snapshot's xmin, so a late commit never lands behind a cursor.
   */
  @Column({ type: 'bigint', insert: false, update: false })
  tx!: string;

  @Column({ type: 'jsonb' })
  payload!: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** The W3C `traceparent` of the span that wrote the event (tracing on), continued by the relay's delivery span. */
  @Column({ type: 'text', nullable: true })
  traceparent!: string | null;

  /** Set once the webhook relay has created this event's deliveries. */
  @Column({ name: 'dispatched_at', type: 'timestamptz', nullable: true })
  dispatchedAt!: Date | null;
}
