// A throwaway redis-server on a free loopback port, and `relaxmrf worker` processes on it: what the
// queue test (test/queue.test.ts) and the queue bench (bench/queue.ts) run against. Loopback only,
// nothing saved to disk; every wait is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p)) ?? null;
const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Whether the Redis on `port` answers PING (within 500 ms). */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      c.destroy();
      resolve(ok);
    };
    c.setTimeout(500, () => done(false));
    c.on('error', () => done(false));
    c.on('connect', () => c.write('PING\r\n'));
    c.on('data', (d) => done(String(d).startsWith('+PONG')));
  });
}

/** Starts redis-server on a free loopback port; resolves once it answers (at most 5 s). */
export async function startRedis(): Promise<{ url: string; process: ChildProcess }> {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed');
  const port = await freePort();
  const p = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    if (await pong(port)) return { url: `redis://127.0.0.1:${port}`, process: p };
    await sleep(100);
  }
  p.kill('SIGKILL');
  throw new Error(`redis-server did not answer on port ${port} within 5 s`);
}

/** Starts `relaxmrf worker` on `url`; resolves once it serves (at most `ms`). */
export async function startWorker(url: string, args: string[] = [], ms = 30_000): Promise<ChildProcess> {
  const w = spawn(process.execPath, [BIN, 'worker', '--queue', url, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`the worker did not start within ${ms} ms: ${text}`)), ms);
    w.stderr!.on('data', (d) => {
      text += d;
      if (/serving queue/.test(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    w.on('exit', (code) => reject(new Error(`the worker exited (${code}): ${text}`)));
  });
  return w;
}
