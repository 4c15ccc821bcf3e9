// The explorer's data on the wire (Python side: GraphExplorer.payload in
// relay_nb/notebook/explorer.py). The widget sends its data as zlib-compressed JSON bytes,
// one binary buffer: a big model's 2 MB of rows and text are ~0.4 MB in the comm message
// and in a notebook that saves widget state. A stand-in model (tests, benchmarks) may hand
// the dict itself as `data`.

// The data dict now, or a Promise of it when it must be decompressed first.
function readPayload(model) {
  const packed = model.get("payload");
  if (!packed || !packed.byteLength) return model.get("data") || {};
  const bytes = ArrayBuffer.isView(packed)
    ? new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength)
    : new Uint8Array(packed);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Response(stream).text().then(JSON.parse);
}
