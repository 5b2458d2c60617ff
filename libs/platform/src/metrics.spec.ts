import { busOp, GatewayMetrics, webhookOutcome } from './metrics';

describe(GatewayMetrics.name, () => {
  const ours = (sut: GatewayMetrics) => sut.registry.getMetricsAsArray().filter((metric) => !/^(process|nodejs)_/.test(metric.name));

  describe('definitions', () => {
    it('should prefix every metric of ours with wa_gateway_ and name its unit', () => {
      const sut = new GatewayMetrics({ perInstance: false });
      const names = ours(sut).map((metric) => metric.name);
      expect(names.length).toBeGreaterThanOrEqual(18);
      for (const name of names) {
        expect(name).toMatch(/^wa_gateway_[a-z_]+$/);
        // A unit or what is counted: counters end in _total, latencies in _seconds.
        expect(name).toMatch(/_(total|seconds|depth|backlog|instances|clients|connections|requests|writes)$/);
      }
    });

    it('should keep prom-client default process metrics', async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      const text = (await sut.exposition()).body;
      expect(text).toContain('process_cpu_user_seconds_total');
      expect(text).toContain('nodejs_eventloop_lag_seconds');
    });

    it('should give the latency histograms buckets from milliseconds to their timeouts', async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      sut.httpRequestDuration.observe({ method: 'GET', route: '/x', status: 200 }, 0.003);
      sut.recordSend('text', 'sent', 0.3, 'i1');
      sut.recordWebhookDelivery(200, 0.02);
      const text = (await sut.exposition()).body;
      expect(text).toContain('wa_gateway_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/x",status="200"} 1');
      expect(text).toContain('wa_gateway_http_request_duration_seconds_bucket{le="30",method="GET",route="/x",status="200"} 1');
      expect(text).toContain('wa_gateway_send_duration_seconds_bucket{le="120",type="text",outcome="sent"} 1');
      expect(text).toContain('wa_gateway_webhook_delivery_duration_seconds_bucket{le="0.025",outcome="delivered"} 1');
    });
  });

  describe('recordSend', () => {
    it('should count by type and outcome without the instance by default', async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      sut.recordSend('text', 'sent', 0.2, 'instance-1');
      sut.recordSend('text', 'sent', 0.4, 'instance-2');
      sut.recordSend('media', 'failed', 1, 'instance-1');
      const text = (await sut.exposition()).body;
      expect(text).toContain('wa_gateway_sends_total{type="text",outcome="sent"} 2');
      expect(text).toContain('wa_gateway_sends_total{type="media",outcome="failed"} 1');
      expect(text).toContain('wa_gateway_send_duration_seconds_count{type="text",outcome="sent"} 2');
      expect(text).not.toContain('instance-1');
    });

    it('should add the instance label with perInstance', async () => {
      const sut = new GatewayMetrics({ perInstance: true });
      sut.recordSend('text', 'sent', 0.2, 'instance-1');
      sut.recordConnect('paired', 'instance-1');
      sut.recordDisconnect('transient', 428, 'instance-1');
      const text = (await sut.exposition()).body;
      expect(text).toContain('wa_gateway_sends_total{type="text",outcome="sent",instance="instance-1"} 1');
      expect(text).toContain('wa_gateway_connects_total{reason="paired",instance="instance-1"} 1');
      expect(text).toContain('wa_gateway_disconnects_total{reason="transient",code="428",instance="instance-1"} 1');
      // The histogram never takes the instance: its series multiply by the buckets.
      expect(text).toContain('wa_gateway_send_duration_seconds_count{type="text",outcome="sent"} 1');
    });
  });

  describe('timeBusRequest', () => {
    it('should time by op and outcome, passing the answer and the error through', async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      await expect(sut.timeBusRequest('instance.abc123.send', Promise.resolve(7))).resolves.toBe(7);
      const refusal = Object.assign(new Error('no'), { code: 'NoSession' });
      await expect(sut.timeBusRequest('instance.abc123.status', Promise.reject(refusal))).rejects.toBe(refusal);
      const text = (await sut.exposition()).body;
      expect(text).toContain('wa_gateway_bus_request_duration_seconds_count{op="send",outcome="ok"} 1');
      expect(text).toContain('wa_gateway_bus_request_duration_seconds_count{op="status",outcome="NoSession"} 1');
      expect(text).not.toContain('abc123');
    });
  });

  describe('sources', () => {
    it('should read instances by status on scrape, with 0 for statuses nobody has', async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      sut.useSources({ instancesByStatus: async () => [{ status: 'connected', count: 3 }] });
      const text = (await sut.exposition()).body;
      expect(text).toContain('wa_gateway_instances{status="connected"} 3');
      expect(text).toContain('wa_gateway_instances{status="disconnected"} 0');
    });

    it('should read the queue once per scrape for its depth and age', async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      const read = jest.fn(async () => [{ state: 'queued', depth: 5, oldestSeconds: 12.5 }]);
      sut.useSources({ asyncQueue: read });
      const text = (await sut.exposition()).body;
      expect(read).toHaveBeenCalledTimes(1);
      expect(text).toContain('wa_gateway_async_queue_depth{state="queued"} 5');
      expect(text).toContain('wa_gateway_async_queue_depth{state="in_flight"} 0');
      expect(text).toContain('wa_gateway_async_queue_oldest_age_seconds{state="queued"} 12.5');
    });

    it('should leave a gauge out and count the error when its read fails', async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      sut.useSources({ webhookBacklog: () => Promise.reject(new Error('down')) });
      const text = (await sut.exposition()).body;
      expect(text).not.toMatch(/^wa_gateway_webhook_backlog /m);
      // Counted while the scrape runs: the next one shows it.
      expect((await sut.exposition()).body).toContain('wa_gateway_metrics_source_errors_total{source="webhook_backlog"} 1');
    });

    it('should report the pool and stop once the source is dropped', async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      const sources = { databasePool: () => ({ total: 10, idle: 4, waiting: 2 }) };
      sut.useSources(sources);
      let text = (await sut.exposition()).body;
      expect(text).toContain('wa_gateway_db_pool_connections{state="in_use"} 6');
      expect(text).toContain('wa_gateway_db_pool_waiting_requests 2');
      sut.dropSources(sources);
      sut.registry.resetMetrics();
      text = (await sut.exposition()).body;
      expect(text).not.toContain('wa_gateway_db_pool_connections{');
    });

    it('should report the instances a session worker holds, and leave the gauge out elsewhere or when the read fails', async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      expect((await sut.exposition()).body).not.toMatch(/^wa_gateway_worker_instances /m);
      let held: Promise<number> = Promise.resolve(42);
      sut.useSources({ workerInstances: () => held });
      expect((await sut.exposition()).body).toMatch(/^wa_gateway_worker_instances 42$/m);
      held = Promise.reject(new Error('down'));
      expect((await sut.exposition()).body).not.toMatch(/^wa_gateway_worker_instances /m);
      expect((await sut.exposition()).body).toContain('wa_gateway_metrics_source_errors_total{source="worker_instances"}');
    });

    it("should report a session worker's inbound backlog and count its pauses", async () => {
      const sut = new GatewayMetrics({ perInstance: false });
      sut.useSources({ inboundBacklog: () => ({ depth: 37, pausedSockets: 1, writesPending: 5 }) });
      sut.inboundPauses.inc();
      sut.inboundGroupWrites.observe(3);
      sut.inboundGroupDuration.observe(0.004);
      const text = (await sut.exposition()).body;
      expect(text).toContain('wa_gateway_inbound_queue_depth 37');
      expect(text).toContain('wa_gateway_inbound_paused_connections 1');
      expect(text).toContain('wa_gateway_inbound_pauses_total 1');
      expect(text).toContain('wa_gateway_inbound_pending_writes 5');
      expect(text).toContain('wa_gateway_inbound_write_group_writes_bucket{le="2"} 0');
      expect(text).toContain('wa_gateway_inbound_write_group_writes_bucket{le="4"} 1');
      expect(text).toContain('wa_gateway_inbound_write_group_duration_seconds_bucket{le="0.0025"} 0');
      expect(text).toContain('wa_gateway_inbound_write_group_duration_seconds_bucket{le="0.005"} 1');
    });
  });
});

describe('busOp', () => {
  it('should keep the op of an instance subject and drop its id', () => {
    expect(busOp('instance.r1b2c3d.message.react')).toBe('message.react');
    expect(busOp('sessions.place')).toBe('sessions.place');
    expect(busOp('events.r1b2c3d')).toBe('other');
  });
});

describe('webhookOutcome', () => {
  it('should group receiver answers by class', () => {
    expect([200, 204, 404, 410, 503, 302, null].map(webhookOutcome)).toEqual([
      'delivered',
      'delivered',
      'http_4xx',
      'http_4xx',
      'http_5xx',
      'http_other',
      'error',
    ]);
  });
});
