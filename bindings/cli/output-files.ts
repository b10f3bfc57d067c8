// Files the CLI writes (--out PREFIX, learn's --out MODEL.uai, --plot FILE.svg): checked before the
// run, so that minutes of inference or learning are not lost to a path that cannot be written, and
// any write that still fails is reported in one line rather than as a stack trace.
import { accessSync, constants, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** Why a write failed, from its error code, as the end of a sentence about the path. */
export function whyUnwritable(e: unknown): string {
  const code = (e as { code?: string } | null)?.code;
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'is in a directory that does not exist';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'cannot be written (permission denied)';
  return `cannot be written (${code ?? (e as Error).message})`;
}

/** Why `path` cannot be written (as whyUnwritable words it), or null when its directory exists and is writable and the path is not a directory. */
export function unwritablePath(path: string): string | null {
  const full = resolve(path);
  try {
    if (statSync(full, { throwIfNoEntry: false })?.isDirectory()) return 'is a directory';
    const dir = dirname(full);
    if (!statSync(dir).isDirectory()) return 'is in a directory that does not exist';
    accessSync(dir, constants.W_OK);
    return null;
  } catch (e) {
    return whyUnwritable(e);
  }
}

/** A file the CLI was asked to write could not be: one line naming the option and the path (exit 2). */
export class OutputError extends Error {}

/** Writes `text` to `path`; a failure becomes an OutputError. */
export async function writeOutput(option: string, path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text);
  } catch (e) {
    throw new OutputError(`${option} ${path}: ${whyUnwritable(e)}`);
  }
}
