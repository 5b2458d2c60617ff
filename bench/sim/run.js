#!/usr/bin/env node
// Load bench for the WhatsApp simulator: N real Baileys sockets (spread over worker processes)
// log in as pre-provisioned linked devices, then exchange messages with a simulated phone.
//
//   nx run wa-sim:build && node bench/sim/run.js --clients 1000 --workers 2 --messages 1 --peers 10
// Options: --clients, --workers (client processes), --messages (per client, device→phone),
// --peers (simulated phones on the other side), --concurrency (connects in flight),
// --sendConcurrency (sends in flight per worker), --timeoutMs, --decrypt 1 (phones decrypt).
// Progress goes to stderr; stdout carries one JSON object.
//
// The simulator runs in this process in load mode (phones send receipts without decrypting,
// fresh devices skip the 812-prekey upload). Everything stays on 127.0.0.1.
/* global Buffer, setTimeout, clearTimeout */
'use strict';

const { fork } = require('child_process');
const path = require('path');

const SIM_DIST = path.join(__dirname, '../../dist/libs/wa-sim/index.js');

function parseArgs(argv) {
  const args = { clients: 1000, workers: 2, messages: 1, peers: 10, concurrency: 100, sendConcurrency: 20, timeoutMs: 120_000, decrypt: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    const value = Number(argv[i + 1]);
    if (!(key in args) || !Number.isFinite(value)) throw new Error(`bad argument ${argv[i]} ${argv[i + 1]}`);
    args[key] = value;
  }
  return args;
}

function percentile(values, p) {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(label, values) {
  return `${label}: n=${values.length} p50=${percentile(values, 50)}ms p95=${percentile(values, 95)}ms max=${Math.max(0, ...values)}ms`;
}

async function parent() {
  const args = parseArgs(process.argv.slice(2));
  const { startSimulator, quietLibsignalConsole } = require(SIM_DIST);
  const { BufferJSON } = require('@whiskeysockets/baileys');
  quietLibsignalConsole();
  const running = await startSimulator({
    controlPort: false,
    media: false,
    // Load mode (default): phones receipt without decrypting. --decrypt 1: phones decrypt every message.
    phoneDecrypt: args.decrypt === 1,
    initialPrekeyCount: 50,
    autoReceipts: { deliveredMs: 0, readMs: null },
  });
  const { sim } = running;
  // Several peer phones, because each simulated phone (like a real one) processes its traffic in order.
  const peers = Array.from({ length: args.peers }, (_, i) => sim.createAccount({ phone: `55119999${String(i).padStart(5, '0')}`, name: `Load peer ${i}` }));
  const devices = [];
  for (let i = 0; i < args.clients; i++) {
    const phone = `55119${String(i).padStart(8, '0')}`;
    sim.createAccount({ phone, name: `Gateway ${i}` });
    const { device, creds } = sim.provisionDevice(phone);
    devices.push({ phone, jid: device.jid, peer: peers[i % peers.length].jid, creds: JSON.stringify(creds, BufferJSON.replacer) });
  }
  console.error(`simulator up at ${running.websocketUrl}; ${args.clients} devices provisioned`);

  const workers = [];
  const perWorker = Math.ceil(devices.length / args.workers);
  const results = { open: [], failedOpen: 0, sendAcks: [], received: [], rss: [] };
  const waitAll = (type) =>
    Promise.all(
      workers.map(
        (w) =>
          new Promise((resolve) => {
            const onMessage = (msg) => {
              if (msg.type === type) {
                w.off('message', onMessage);
                resolve(msg);
              }
            };
            w.on('message', onMessage);
          }),
      ),
    );

  const startedAt = Date.now();
  for (let w = 0; w < args.workers; w++) {
    const slice = devices.slice(w * perWorker, (w + 1) * perWorker);
    if (!slice.length) continue;
    const child = fork(__filename, ['--worker'], { stdio: [0, 2, 2, 'ipc'] }); // children report on stderr: stdout carries only the JSON
    child.send({
      type: 'start',
      url: running.websocketUrl,
      rootPublicKey: running.rootPublicKey,
      devices: slice,
      concurrency: Math.ceil(args.concurrency / args.workers),
      timeoutMs: args.timeoutMs,
    });
    workers.push(child);
  }
  const opened = await waitAll('opened');
  for (const o of opened) {
    results.open.push(...o.times);
    results.failedOpen += o.failed;
    if (Object.keys(o.closes).length) console.error('  closes during connect:', JSON.stringify(o.closes));
  }
  const connectWall = Date.now() - startedAt;
  const health = sim.health();
  console.error(
    `${results.open.length}/${args.clients} open in ${connectWall} ms (${results.failedOpen} failed); simulator sees ${health.connections} connections`,
  );
  console.error(summary('  connect→open', results.open));

  // Devices → phone: each socket sends N texts; done when the phone's delivery receipt comes back.
  const sendStart = Date.now();
  for (const w of workers) w.send({ type: 'send', count: args.messages, concurrency: args.sendConcurrency });
  const sent = await waitAll('sent');
  for (const s of sent) {
    results.sendAcks.push(...s.times);
    if (Object.keys(s.errors).length) console.error('  send errors:', JSON.stringify(s.errors));
    if (Object.keys(s.closes).length) console.error('  closes so far:', JSON.stringify(s.closes));
  }
  const sendWall = Date.now() - sendStart;
  console.error(`${results.sendAcks.length} messages device→phone delivered in ${sendWall} ms (${Math.round((results.sendAcks.length / sendWall) * 1000)}/s)`);
  console.error(summary('  send→delivered', results.sendAcks));

  // Phone → devices: the peer phone Signal-encrypts one text per device.
  for (const w of workers) w.send({ type: 'expect', text: 'load ping', timeoutMs: args.timeoutMs });
  await waitAll('ready');
  const fanStart = Date.now();
  await Promise.all(devices.map((d) => sim.sendMessage(d.peer, d.phone, { text: 'load ping' })));
  const got = await waitAll('received');
  for (const g of got) results.received.push(...g.times.map((t) => t - fanStart));
  console.error(`peer phones received ${peers.reduce((n, p) => n + sim.phoneState.inbox(p.phone).length, 0)} messages`);
  console.error(`${results.received.length} messages phone→device received in ${Date.now() - fanStart} ms`);
  console.error(summary('  phone→device', results.received));

  for (const w of workers) w.send({ type: 'stats' });
  const stats = await waitAll('stats');
  const mem = process.memoryUsage();
  console.error(`memory: simulator rss=${Math.round(mem.rss / 1e6)}MB; workers rss=${stats.map((s) => Math.round(s.rss / 1e6)).join('/')}MB`);

  const timing = (values) => ({ n: values.length, p50Ms: percentile(values, 50), p95Ms: percentile(values, 95), maxMs: Math.max(0, ...values) });
  process.stdout.write(
    `${JSON.stringify({
      bench: 'sim',
      mode: args.decrypt === 1 ? 'decrypt' : 'load',
      clients: args.clients,
      workers: args.workers,
      connected: results.open.length,
      failedToOpen: results.failedOpen,
      connectWallMs: connectWall,
      connect: timing(results.open),
      deviceToPhone: { ...timing(results.sendAcks), wallMs: sendWall, perSecond: Math.round((results.sendAcks.length / sendWall) * 1000) },
      phoneToDevice: timing(results.received),
      rssMb: { simulator: Math.round(mem.rss / 1e6), clientWorkers: stats.map((w) => Math.round(w.rss / 1e6)) },
      baseline: 'the client side is bare Baileys sockets in plain worker processes; the simulator (one process, one core) is what is measured',
    })}\n`,
  );
  for (const w of workers) w.send({ type: 'stop' });
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('exit', resolve))));
  await running.stop();
  process.exit(results.failedOpen ? 1 : 0);
}

async function worker() {
  const { default: makeWASocket, BufferJSON, WA_CERT_DETAILS, proto } = require('@whiskeysockets/baileys');
  require(SIM_DIST).quietLibsignalConsole();
  const pino = require('pino');
  const logger = pino({ level: 'silent' });
  const sockets = [];
  const peerOf = new Map();
  const closes = {};
  let expecting;

  process.on('message', async (msg) => {
    if (msg.type === 'start') {
      WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(msg.rootPublicKey, 'base64');
      const times = [];
      let failed = 0;
      let next = 0;
      const connectOne = async (device) => {
        const creds = JSON.parse(device.creds, BufferJSON.reviver);
        const store = new Map();
        const keys = {
          get: async (type, ids) => Object.fromEntries(ids.filter((id) => store.has(`${type}:${id}`)).map((id) => [id, store.get(`${type}:${id}`)])),
          set: async (data) => {
            for (const [type, entries] of Object.entries(data)) {
              for (const [id, value] of Object.entries(entries)) {
                if (value === null) store.delete(`${type}:${id}`);
                else store.set(`${type}:${id}`, value);
              }
            }
          },
        };
        const started = Date.now();
        const sock = makeWASocket({
          auth: { creds, keys },
          waWebSocketUrl: msg.url,
          logger,
          markOnlineOnConnect: false,
          fireInitQueries: false,
          shouldSyncHistoryMessage: () => false,
        });
        sock.ev.on('creds.update', (u) => Object.assign(creds, u));
        sock.ev.on('connection.update', (u) => {
          if (u.connection === 'close') {
            const code = u.lastDisconnect?.error?.output?.statusCode ?? 'none';
            closes[code] = (closes[code] ?? 0) + 1;
          }
        });
        sockets.push(sock);
        peerOf.set(sock, device.peer);
        await new Promise((resolve) => {
          const timer = setTimeout(() => {
            failed++;
            resolve();
          }, msg.timeoutMs);
          sock.ev.on('connection.update', (u) => {
            if (u.connection === 'open') {
              clearTimeout(timer);
              times.push(Date.now() - started);
              resolve();
            } else if (u.connection === 'close') {
              clearTimeout(timer);
              failed++;
              resolve();
            }
          });
        });
        sock.ev.on('messages.upsert', ({ messages }) => {
          if (!expecting) return;
          for (const m of messages) {
            if (!m.key.fromMe && m.message?.conversation === expecting.text) {
              expecting.times.push(Date.now());
              if (expecting.times.length === sockets.length) process.send({ type: 'received', times: expecting.times });
            }
          }
        });
      };
      const lanes = Array.from({ length: msg.concurrency }, async () => {
        while (next < msg.devices.length) await connectOne(msg.devices[next++]);
      });
      await Promise.all(lanes);
      process.send({ type: 'opened', times, failed, closes });
    } else if (msg.type === 'send') {
      const times = [];
      const errors = {};
      const sendOne = async (sock) => {
        for (let i = 0; i < msg.count; i++) {
          const started = Date.now();
          await new Promise((resolve) => {
            const timer = setTimeout(() => {
              errors.timeout = (errors.timeout ?? 0) + 1;
              resolve();
            }, 30_000);
            let id;
            let done = false;
            const seen = new Map();
            const check = (key, status) => {
              if (done || status < proto.WebMessageInfo.Status.DELIVERY_ACK) return;
              if (!id) return void seen.set(key.id, status);
              if (key.id !== id) return;
              done = true;
              clearTimeout(timer);
              times.push(Date.now() - started);
              resolve();
            };
            sock.ev.on('messages.update', (updates) => updates.forEach((u) => check(u.key, u.update.status ?? 0)));
            sock.ev.on('messages.upsert', ({ messages }) => messages.forEach((m) => check(m.key, m.status ?? 0)));
            sock.sendMessage(peerOf.get(sock), { text: `load ${i}` }).then(
              (sent) => {
                id = sent.key.id;
                // The receipt may have been processed before sendMessage resolved.
                if (seen.has(id)) check(sent.key, seen.get(id));
              },
              (err) => {
                errors[err.message] = (errors[err.message] ?? 0) + 1;
                clearTimeout(timer);
                resolve();
              },
            );
          });
        }
      };
      let next = 0;
      // Bounded concurrency: a burst of hundreds of sends per process starves the event loop
      // (and with it Baileys' keepalive, which then ends sockets with 408).
      await Promise.all(
        Array.from({ length: msg.concurrency }, async () => {
          while (next < sockets.length) await sendOne(sockets[next++]);
        }),
      );
      process.send({ type: 'sent', times, errors, closes });
    } else if (msg.type === 'expect') {
      expecting = { text: msg.text, times: [] };
      // Report what arrived even if some sockets never get it.
      setTimeout(() => expecting.times.length < sockets.length && process.send({ type: 'received', times: expecting.times }), msg.timeoutMs);
      process.send({ type: 'ready' });
    } else if (msg.type === 'stats') {
      process.send({ type: 'stats', rss: process.memoryUsage().rss });
    } else if (msg.type === 'stop') {
      for (const sock of sockets) sock.end(undefined);
      setTimeout(() => process.exit(0), 200);
    }
  });
}

if (process.argv.includes('--worker')) {
  worker();
} else {
  parent().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
