import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Which worker holds an instance's session; `fencing_token` grows on every change of holder. */
@Entity({ name: 'session_leases' })
export class SessionLeaseEntity {
  @PrimaryColumn({ name: 'instance_id', type: 'text' })
  instanceId!: string;

  @Column({ name: 'worker_id', type: 'text' })
  workerId!: string;

  @Column({ name: 'fencing_token', type: 'bigint' })
  fencingToken!: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;
}

/** Live session workers, for even spreading and capacity. */
@Entity({ name: 'session_workers' })
export class SessionWorkerEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'integer' })
  capacity!: number;

  @Column({ name: 'heartbeat_at', type: 'timestamptz' })
  heartbeatAt!: Date;
}
