// Connections to the queue's Redis: the URL check, a first connection that fails fast with a clear
// message (a wrong URL, a closed port, a refused password), and the options BullMQ's own
// connections get. ioredis and bullmq are loaded on demand: `import 'relaxmrf'` does not load them.
import type { Redis } from 'ioredis';
import { ModelError } from '../core/errors.ts';
import { parseQueueURL } from './queue-jobs.ts';

export interface QueueConnection {
  /** redis://… or rediss://… (TLS), with the password if any. */
  url: string;
  /** The URL without the password: for messages and diagnostics. */
  display: string;
}

export function queueConnection(url: string): QueueConnection {
  return parseQueueURL(url);
}

/** Options of BullMQ's connections: reconnect with backoff (blocking commands need maxRetriesPerRequest null). */
export function bullConnection(c: QueueConnection): { url: string; maxRetriesPerRequest: null; connectTimeout: number; retryStrategy: (times: number) => number } {
  // A short connect timeout: its timer outlives disconnect(), and a process waits for it to exit.
  return { url: c.url, maxRetriesPerRequest: null, connectTimeout: 2000, retryStrategy: (times: number) => Math.min(200 * times, 2000) };
}

/**
 * A connection for our own commands (blobs, results, heartbeat), connected and answering PING —
 * or a ModelError naming the URL (without its password) and the reason, within `timeoutMs`.
 */
export async function connectRedis(c: QueueConnection, timeoutMs = 5000): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(c.url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 2,
    // After the first connection, brief outages are retried; a lasting one is the caller's to judge (heartbeat).
    retryStrategy: (times: number) => Math.min(200 * times, 1000),
  });
  let lastError: unknown = null;
  redis.on('error', (e) => (lastError = e));
  try {
    // SELECT again, awaited: ioredis's own SELECT of a database past the server's count only emitted
    // an error, and the connection went on in database 0 (a run on /99 was served from /0).
    await withTimeout(redis.connect().then(() => redis.select(redis.options.db ?? 0)).then(() => redis.ping()), timeoutMs, 'no answer');
    return redis;
  } catch (e) {
    redis.disconnect();
    const why = (e as Error)?.message ?? String(e);
    const detail = lastError && (lastError as Error).message !== why ? `${why} (${(lastError as Error).message})` : why;
    throw new ModelError(`cannot use the queue at ${c.display}: ${detail}`);
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
    }),
  ]);
}
