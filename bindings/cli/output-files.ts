// Files the CLI writes (--out PREFIX, learn's --out MODEL.uai, --plot FILE.svg): checked before the
// run, so that minutes of inference or learning are not lost to a path that cannot be written, and
// any write that still fails is reported in one line rather than as a stack trace.
import { accessSync, constants, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

/** Why a write failed, from its error code, as the end of a sentence about the path. */
export function whyUnwritable(e: unknown): string {
  const code = (e as { code?: string } | null)?.code;
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'is in a directory that does not exist';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'cannot be written (permission denied)';
  return `cannot be written (${code ?? (e as Error).message})`;
}

/** Why `path` cannot be written (as whyUnwritable words it), or null when its directory exists and takes a new file and the path is not a directory. */
export function unwritablePath(path: string): string | null {
  const full = resolve(path);
  try {
    if (Buffer.byteLength(basename(full)) > 255) return 'has a name longer than 255 bytes';
    if (statSync(full, { throwIfNoEntry: false })?.isDirectory()) return 'is a directory';
    const dir = dirname(full);
    if (!statSync(dir).isDirectory()) return 'is in a directory that does not exist';
    accessSync(dir, constants.W_OK);
  } catch (e) {
    return whyUnwritable(e);
  }
  // A directory can exist and allow writing and still refuse new files (procfs: ENOENT, which was
  // reported after the run as a directory that does not exist): a file made and removed there says.
  const probe = join(dirname(full), `.relaxmrf-${process.pid}-probe.tmp`);
  try {
    writeFileSync(probe, '', { flag: 'wx' });
  } catch (e) {
    const code = (e as { code?: string } | null)?.code;
    return code === 'EEXIST' ? null : code === 'ENOENT' ? 'cannot be created in its directory (ENOENT)' : whyUnwritable(e);
  }
  rmSync(probe, { force: true });
  return null;
}

/** A file the CLI was asked to write could not be: one line naming the option and the path (exit 2). */
export class OutputError extends Error {}

/** Writes `text` to `path` (writeOutputs); a failure becomes an OutputError. */
export async function writeOutput(option: string, path: string, text: string, after = '', rescue = false): Promise<void> {
  return writeOutputs(option, [[path, text]], after, rescue);
}

/**
 * Writes each file under a temporary name beside it, then renames them into place: every file is
 * written or none is (a full disk left PREFIX.PR without its .MAR, and a file cut short). A failure
 * becomes an OutputError naming the file, with `after` appended (what the caller kept).
 */
export async function writeOutputs(option: string, files: readonly (readonly [path: string, text: string])[], after = '', rescue = false): Promise<void> {
  // Short temporary names beside the files (PREFIX.MAR.<pid>.tmp passed 255 bytes where PREFIX.MAR did not).
  const temps = files.map(([path], k) => join(dirname(resolve(path)), `.relaxmrf-${process.pid}-${k}.tmp`));
  let at = 0;
  // Written and renamed synchronously: nothing else runs in between. An exit during asynchronous
  // writes (a closed stdout pipe: `--json | head`) left temporary files behind, also after an exit
  // handler removed them, when the thread pool created a file after the handler had run.
  try {
    for (; at < files.length; at++) writeFileSync(temps[at], files[at][1]);
    for (let k = 0; k < files.length; k++) renameSync(temps[k], files[k][0]);
  } catch (e) {
    for (const t of temps) rmSync(t, { force: true });
    // `rescue`: the files are the run's only copy (a learned model, samples not printed): kept in the temporary directory.
    const kept = rescue ? await rescued(files) : null;
    const fallback = kept ? `; written instead to ${kept.join(' and ')}` : rescue ? '; writing them to the temporary directory failed too' : after;
    throw new OutputError(`${option} ${files[Math.min(at, files.length - 1)][0]}: ${whyUnwritable(e)}${fallback}`);
  }
}

/** The files written to the temporary directory under their own names and this process's id; null when that fails too. */
async function rescued(files: readonly (readonly [path: string, text: string])[]): Promise<string[] | null> {
  try {
    const out: string[] = [];
    for (const [path, text] of files) {
      const spare = join(tmpdir(), `${process.pid}-${basename(path)}`);
      await writeFile(spare, text);
      out.push(spare);
    }
    return out;
  } catch {
    return null;
  }
}
