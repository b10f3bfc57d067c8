// Serves the demo (demo/): three pages — the live Ising lattice (index.html), real problems against
// exact inference (problems.html), image denoising (denoise.html) — whose scripts and Web Workers
// are bundled with esbuild in memory at start-up, the shipped model files (demo/instances/) and
// build/release.wasm (as application/wasm).
//   npm run demo [-- --port 8080]     prints the address; 127.0.0.1 only.
import { createServer, type Server } from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGES = ['index.html', 'problems.html', 'denoise.html'];

export interface DemoServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Bundles the page and its worker (ES modules, for current browsers); returns name → code. */
export async function bundleDemo(): Promise<Map<string, Uint8Array>> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: {
      main: 'demo/main.ts', worker: 'demo/worker.ts',
      problems: 'demo/problems.ts', 'problems-worker': 'demo/problems-worker.ts',
      denoise: 'demo/denoise.ts', 'denoise-worker': 'demo/denoise-worker.ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outdir: 'demo/dist',
    write: false,
    sourcemap: 'inline',
    logLevel: 'silent',
  });
  const files = new Map<string, Uint8Array>();
  for (const f of result.outputFiles) files.set('/' + f.path.split(/[\\/]/).pop()!, f.contents);
  return files;
}

export async function startDemoServer({ port = 0, host = '127.0.0.1' }: { port?: number; host?: string } = {}): Promise<DemoServer> {
  const bundles = await bundleDemo();
  const wasm = await readFile(join(ROOT, 'build/release.wasm')).catch(() => {
    throw new Error('build/release.wasm not found: run "npm run asbuild:release" first');
  });
  const pages = new Map<string, Uint8Array>();
  for (const p of PAGES) pages.set('/' + p, await readFile(join(ROOT, 'demo', p)));
  const instances = (await readdir(join(ROOT, 'demo/instances'))).filter((f) => /\.(uai|fg)$/.test(f)).sort();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (type: string, body: Uint8Array) => {
      res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    if (path === '/') send('text/html; charset=utf-8', pages.get('/index.html')!);
    else if (pages.has(path)) send('text/html; charset=utf-8', pages.get(path)!);
    else if (path === '/instances/index.json') send('application/json', new TextEncoder().encode(JSON.stringify(instances)));
    else if (path.startsWith('/instances/') && instances.includes(path.slice('/instances/'.length))) {
      readFile(join(ROOT, 'demo/instances', path.slice('/instances/'.length))).then((b) => send('text/plain; charset=utf-8', b));
    }
    else if (path === '/release.wasm') send('application/wasm', wasm);
    else if (bundles.has(path)) send('text/javascript; charset=utf-8', bundles.get(path)!);
    else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, ok);
  });
  const addr = server.address() as { port: number };
  return {
    url: `http://${host}:${addr.port}/`,
    server,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.PORT ?? 8080);
  const demo = await startDemoServer({ port });
  console.log(`relaxmrf demo: ${demo.url}  (Ctrl-C to stop)`);
}
