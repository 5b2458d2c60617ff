/**
 * bench/webhooks: the webhook relay (outbox → webhook_deliveries → HTTP POST) under load. Events go
 * into the outbox at a steady rate for a while, then as one burst, spread over several instances and
 * chats (delivery is ordered per (webhook, instance, chat) lane). A loopback receiver in a process of
 * its own records event-to-delivery latency from the creation time each payload carries. Next to it,
 * in the same run, a bare undici client (keep-alive, the relay's concurrency towards one receiver)
 * posts the same bodies to the same receiver.
 *
 *   npm run bench -- webhooks [--seconds 60] [--rate 1000] [--burst 20000] [--instances 20] [--chats 10]
 *                             [--batch 500] [--run 20] [--inflight 8] [--poll 1000] [--gap 10 (ms between fan-outs, and between claims)] [--pool 0 (= inflight + 4)]
 *                             [--stall 20 (s without progress before a phase gives up)] [--wait 300 (s at most per phase)]
 *                             [--warm 1 (0: start the relay cold, without its warmUp)]
 *                             [--receiver-warm 4000 (posts the receiver sends itself first)] [--pre-seconds 0 (each side's rate, unmeasured, before its steady phase)]
 *                             [--seed-rows 0 (events already dispatched and delivered in the relay's tables, analyzed, before it starts)]
 *                             [--payload small|captured (each event ~0.4 KB, or a real `messages` event's ~2.6 KB with its chat)]
 *
 * `steady.relay.hopsMs`: where the steady phase's time went, from the rows' own clocks (the feeder's insert,
 * fan-out, then claim + request + the flush that recorded it), p50/p99 over its first second and the rest.
 * `relaySqlTimeline`: each statement kind's count, mean and max wait and rows, per second over the steady
 * phase's first 3 s and after. `WEBHOOKS_RELAY_NODE_FLAGS` passes Node/V8 flags to the relay process.
 *
 * `burst.{relay,bare}.deliveredPer100ms`: deliveries received in each 100 ms from the first (`firstDeliveryAfterMs`
 * after the burst's start): the relay's ramp while its events are still being fed, its plateau, its tail.
 * `burst.inFlight`: requests in flight from the burst's start to its last answer, relay and bare
 * (mean, share of the time at the limit, ms to the first request): does the relay keep its concurrency busy?
 *
 * Processes: this one feeds the outbox (and orchestrates); the relay runs in a child, the bare client
 * in another, the receiver in a third. Prints one JSON object. Goals (issue #38): burst ≥ 0.6 × the
 * bare client's deliveries/s in the same run, p99 ≤ 50 ms at 1,000 events/s. Besides time, it prints
 * what the machine's load does not inflate: relay CPU and SQL statements per delivery, and the
 * Postgres buffers the run touched per delivery in the relay's two tables (pg_statio, read at the end).
 * `cpuMsPerThousandDeliveries.afterStart` counts each process's CPU from its ready on (the relay's module
 * loading, ~0.75 s of a bundle the bare client does not load, left out) and the kernel's part of it.
 *
 * `--sink rabbitmq` (issue #18) measures the RabbitMQ event sink instead: the instances get a RabbitMQ
 * sink (the same relay, lanes per instance, publisher confirms) and the receiver is a consumer of a
 * queue bound to the bench's exchange; the bare client is an amqplib publish loop with confirms and
 * the same concurrency. AMQP_URL (default amqp://guest:guest@127.0.0.1:5672) names the broker.
 *
 * `--sink nats` measures the NATS JetStream sink: a stream of the run's own (made by the receiver with the sink's
 * settings, deleted at the end) takes the instances' events, the receiver subscribes to its subjects; the bare
 * client publishes the same bodies into the same stream with the sink's headers, each a request answered by the
 * stream's PubAck, at the same concurrency. NATS_SINK_URL (default nats://127.0.0.1:4222) names the server.
 *
 * `--repeat K` runs the whole bench K times, each in a process of its own, and prints each run's key figures and
 * their medians (bench/webhooks/repeat.ts); the goals are then judged on the medians.
 */
import { runBare } from './bare';
import { type Role, role } from './options';
import { orchestrate } from './orchestrate';
import { runReceiver } from './receiver';
import { runRelay } from './relay';
import { REPEAT, runRepeated } from './repeat';

const roles: Record<Role, () => Promise<void>> = { orchestrate, receiver: runReceiver, relay: runRelay, bare: runBare };
(REPEAT > 0 && role === 'orchestrate' ? runRepeated() : roles[role]()).catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
