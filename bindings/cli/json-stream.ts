// JSON text in chunks: a million marginals are written piece by piece instead of as one string of
// ~100 MB. The text is exactly JSON.stringify's, except that typed arrays are written as arrays
// (as the CLI's rows always were, converted with Array.from).

/** Writes the JSON text of `value` to `sink` in chunks of about `chunkChars` characters. */
export function writeJSON(value: unknown, sink: (chunk: string) => void, chunkChars = 1 << 16): void {
  let buf = '';
  const num = (x: number) => (Number.isFinite(x) ? String(x) : 'null');
  const emit = (v: unknown): void => {
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON: () => unknown }).toJSON();
    if (v === null) buf += 'null';
    else if (typeof v === 'number') buf += num(v);
    else if (typeof v === 'string' || typeof v === 'boolean') buf += JSON.stringify(v);
    else if (typeof v === 'bigint') throw new TypeError('Do not know how to serialize a BigInt');
    else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
      const a = v as unknown as ArrayLike<number>;
      buf += '[';
      for (let k = 0; k < a.length; k++) buf += k ? ',' + num(a[k]) : num(a[k]);
      buf += ']';
    } else if (Array.isArray(v)) {
      buf += '[';
      for (let k = 0; k < v.length; k++) {
        if (k) buf += ',';
        const x = v[k];
        if (x === undefined || typeof x === 'function' || typeof x === 'symbol') buf += 'null';
        else emit(x);
        if (buf.length >= chunkChars) {
          sink(buf);
          buf = '';
        }
      }
      buf += ']';
    } else if (typeof v === 'object') {
      buf += '{';
      let first = true;
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
        buf += (first ? '' : ',') + JSON.stringify(k) + ':';
        first = false;
        emit(x);
      }
      buf += '}';
    }
  };
  emit(value);
  if (buf.length) sink(buf);
}
