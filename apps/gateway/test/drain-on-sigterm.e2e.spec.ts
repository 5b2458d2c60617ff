import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { testDatabaseUrl, testNatsUrl } from '@gw/testing';
import 'reflect-metadata';
import { buildDocumentWithoutServices } from '../src/openapi/document-app';
import { ResponseContract } from './support/response-contract';

const ADMIN = 'drain-test-admin-token-0123456789abcdef';

/** A port nobody listens on now (the gateway takes it a moment later). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** An answer the child gave, kept for the contract check (the harness's onSend hook is in another process). */
interface Answer {
  method: string;
  path: string;
  status: number;
  contentType: string;
  text: string;
}
const answers: Answer[] = [];

/** GET on a new connection: the status, or the connection's error code (ECONNREFUSED once it stopped accepting). */
/** The `connection` header a keep-alive client is answered with. */
function connectionOf(port: number, path: string): Promise<string> {
  const agent = new Agent({ keepAlive: true });
  return new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.headers.connection ?? '')));
    });
    req.on('error', reject);
    req.end();
  }).finally(() => agent.destroy());
}

function get(port: number, path: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        answers.push({ method: 'GET', path, status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text });
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

const until = async (what: () => Promise<boolean>, ms: number) => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/**
 * Issue #39's rolling restart, for a gateway: the real main.ts in a process of its own (as deployed: over
 * NATS when the machine has one), SIGTERMed while a request is in flight (its body still arriving).
 * /ready goes 503 while the rest is still served (DRAIN_DELAY_MS), then the server stops accepting, the
 * request in flight is answered and done (its row is in Postgres), and the process exits 0.
 */
describe('a gateway SIGTERMed with a request in flight', () => {
  let admin: Client;
  let database: string;
  let url: string;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    const base = new URL(await testDatabaseUrl());
    admin = new Client({ connectionString: base.toString() });
    await admin.connect();
    database = `drain_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${database}`);
    base.pathname = `/${database}`;
    url = base.toString();
  });

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  it('should answer /ready 503 first, stop accepting, answer the request in flight, then exit 0', async () => {
    answers.length = 0;
    const port = await freePort();
    const nats = await testNatsUrl();
    const output: string[] = [];
    child = spawn(process.execPath, [join(__dirname, 'support/ts-child.js'), join(__dirname, '../src/main.ts')], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: url,
        ...(nats ? { NATS_URL: nats } : {}),
        PORT: String(port),
        HOST: '127.0.0.1',
        ADMIN_TOKEN: ADMIN,
        DRAIN_DELAY_MS: '1500',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    await until(async () => (await get(port, '/ready')) === 200, 90_000).catch(() => {
      throw new Error(`the gateway did not get ready:\n${output.join('')}`);
    });

    expect(await connectionOf(port, '/health')).toBe('keep-alive');
    // The slow request: headers and half its body now, the rest after SIGTERM.
    const body = JSON.stringify({ name: 'created-while-draining' });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/instance/create',
          method: 'POST',
          agent: false,
          headers: { admintoken: ADMIN, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => {
            answers.push({
              method: 'POST',
              path: '/instance/create',
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? ''),
              text,
            });
            resolve({ status: res.statusCode ?? 0, text });
          });
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        child!.kill('SIGTERM');
        // Inside DRAIN_DELAY_MS: not ready any more, but still serving.
        setTimeout(async () => {
          try {
            expect(await get(port, '/ready')).toBe(503);
            expect(await get(port, '/health')).toBe(200);
            // Every answer closes its connection now: no client is left an idle one for the close to cut.
            expect(await connectionOf(port, '/health')).toBe('close');
            // After it: no longer accepting, the request still open.
            await until(async () => (await get(port, '/health')) === 'ECONNREFUSED', 5_000);
            req.end(body.slice(10));
          } catch (error) {
            reject(error);
          }
        }, 500);
      }, 200);
    });

    const { status, text } = await answer;
    expect({ status, name: JSON.parse(text).instance?.name }).toEqual({ status: 200, name: 'created-while-draining' });
    expect(await exited).toBe(0);
    // Every answer it gave (the /ready polls, the 503 while draining, the slow create) is what /openapi.json says.
    const contract = ResponseContract.ofDocument(await buildDocumentWithoutServices());
    expect(answers.map((answer) => answer.path)).toEqual(expect.arrayContaining(['/ready', '/health', '/instance/create']));
    expect(answers.flatMap((answer) => contract.verify(answer.method, answer.path, answer.status, answer.contentType, answer.text))).toEqual([]);
    const db = new Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT name FROM instances`);
      expect(rows.map((row: { name: string }) => row.name)).toEqual(['created-while-draining']);
    } finally {
      await db.end();
    }
  }, 150_000);
});
