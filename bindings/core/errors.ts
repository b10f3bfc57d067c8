// Error classes shared by the bindings. The CLI maps ModelError and FormatError to exit code 2
// with their one-line message; anything else is a bug and keeps its stack.

/** Invalid model: bad numbers, indices, shapes or sizes. */
export class ModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelError';
  }
}

/** Malformed input file. `where` names the file and, where known, the line or factor. */
export class FormatError extends Error {
  constructor(
    /** The file name (or "<input>" for text). */
    readonly file: string,
    /** Line or factor where the problem is, or null. */
    readonly where: string | null,
    /** What is wrong, without the location. */
    readonly detail: string,
  ) {
    super(`${file}${where ? ` (${where})` : ''}: ${detail}`);
    this.name = 'FormatError';
  }
}

/** The engine refused a job (too large, treewidth past the limit, aborted inside WASM). */
export class EngineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EngineError';
  }
}

/**
 * A run stopped (AbortSignal, Ctrl-C) before anything it could return had completed. An EngineError,
 * so code that catches those still does; its own class, so a caller (the CLI: exit 130) can tell
 * a stop from a refusal (the CLI said exit 3, "the engine refused", after promising a partial result).
 */
export class CancelledError extends EngineError {
  constructor(message: string) {
    super(message);
    this.name = 'CancelledError';
  }
}

/** A model of probability zero (Model.zeroReason), refused by a method that needs a configuration of positive probability. */
export function zeroModel(reason: string): EngineError {
  return new EngineError(`${reason} (Z = 0): the model has probability zero`);
}
