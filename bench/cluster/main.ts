/**
 * bench/cluster (issue #39): the whole deployment of `npm run cluster` — a 3-node NATS cluster,
 * Postgres primary + synchronous standby under Patroni behind HAProxy, 2 gateways, 3 session workers,
 * 2 dispatchers, 2 webhook relays, the simulator — under traffic both ways, and one fault at a time:
 *
 *   nats     kill -9 of the NATS server serving the most session workers (restarted after the phase)
 *   pg       kill -9 of the Postgres primary's node (Patroni and its Postgres, as a lost machine):
 *            Patroni promotes the standby; the old node comes back as a standby after the phase
 *   rolling  every service restarted with SIGTERM, one process at a time (relays, dispatchers,
 *            workers, gateways), each waited for healthy before the next
 *   worker   kill -9 of the session worker holding the most instances (a fresh one replaces it after)
 *
 *   npm run bench -- cluster [--instances 200] [--interval 1000] [--faults nats,pg,rolling,worker]
 *                            [--steady 5000] [--settle 60000] [--lease-ttl <ms>] [--watched 0] [--base-port 25000] [--dir .cluster-bench] [--dist dist] [--keep 1]
 *
 * Traffic: per instance, one round every `--interval` ms: its peer's phone sends it a message (inbound,
 * which the relays deliver to a webhook receiver on loopback), an async send and a sync send to the
 * peer. `--watched N`: N instances, spread over the rest, also send a sync text every second (a few
 * hundred instances with rounds far apart sample their hand-overs sparsely; the rolling restart is judged
 * on the watched ones, every moved instance's figure beside it). The client spreads requests over both
 * gateways as a load balancer would: a connection refused (a gateway restarting; the request never
 * reached it) goes to the other gateway at once. Every text is
 * unique; after each phase the phones' inboxes, the `messages` table and the receiver tell, per send:
 * delivered once, duplicated, lost (accepted, never arrived, not Failed with a reason), stuck; and per
 * inbound message: stored, and delivered to the webhook once, twice or never.
 *
 * `--steady <ms>` (default 5,000): the traffic's time before each fault. Each phase's `steady` says what it was
 * then, with no fault: the share of the machine's cores busy, the sync sends' waits (p50/p99), and each
 * instance's longest sync send within 30 s (`longestWait`, the rolling restart's statistic; `--steady 32000`
 * or more for a full window). A saturated machine's sends are slow before anything fails.
 *
 * Recovery, per affected instance: from the fault (for pg, from the promotion; for rolling, from the
 * SIGTERM of the worker that held it) to the end of its first sync send started after it that answered
 * 200; p50/p99. Goals: 0 lost and 0 duplicated everywhere; nats: every send in flight at the kill
 * answered 200 within 5 s of it (recovery reported); pg: recovery ≤ 30 s of the promotion for every
 * instance; rolling: recovery p99 ≤ 2 s and not one send failed, where a rolling restart's recovery is the
 * longest wait of a sync send started within 30 s of a SIGTERM of the instance's holder (the holder
 * serves until the instance's own hand-over); worker: every instance sends again
 * within 60 s. One JSON object on stdout.
 */
import { serveWebhookReceiver, WEBHOOK_RECEIVER_ROLE } from './clients';
import { runCluster } from './run';

(process.argv[2] === WEBHOOK_RECEIVER_ROLE ? serveWebhookReceiver() : runCluster()).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
    process.exit(1);
  },
);
