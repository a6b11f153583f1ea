// H.264 as WebCodecs takes it everywhere: screenpub sends Annex B access units (start codes, the SPS and PPS
// before each IDR); every engine decodes the "avc" form, the avcC record as the decoder's `description` and each
// NAL unit behind its 4-byte length. Pure functions, tested with `node --test Tests/Viewer/*.test.mjs`.

const SPS = 7;
const PPS = 8;
// The most NAL units and parameter-set bytes read from one access unit: more is not screenpub's stream.
const MAX_UNITS = 256;
const MAX_PARAMETER_SET = 1024;

/// The NAL units of an Annex B access unit (`Uint8Array` views into it), without start codes or trailing zeros.
export function nalUnits(bytes) {
  const starts = [];
  for (let index = 0; index + 2 < bytes.length && starts.length <= MAX_UNITS; index += 1) {
    if (bytes[index] === 0 && bytes[index + 1] === 0 && bytes[index + 2] === 1) {
      starts.push(index + 3);
      index += 2;
    }
  }
  const units = [];
  for (let position = 0; position < starts.length && position < MAX_UNITS; position += 1) {
    let end = position + 1 < starts.length ? starts[position + 1] - 3 : bytes.length;
    while (end > starts[position] && bytes[end - 1] === 0) end -= 1;
    if (end > starts[position]) units.push(bytes.subarray(starts[position], end));
  }
  return units;
}

/// The `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15) of one SPS and one PPS, as WebCodecs' `description`.
export function decoderConfigurationRecord(sps, pps) {
  const record = new Uint8Array(11 + sps.length + pps.length);
  record.set([1, sps[1], sps[2], sps[3], 0xff, 0xe1, sps.length >> 8, sps.length & 0xff]);
  record.set(sps, 8);
  record.set([1, pps.length >> 8, pps.length & 0xff], 8 + sps.length);
  record.set(pps, 11 + sps.length);
  return record;
}

/// One access unit in the avc form: `data` (each NAL unit behind its big-endian length; parameter sets left
/// out, they go in the description) and, for one that carries them, `description` and the codec string
/// (`avc1.PPCCLL` from the SPS). Null when it holds no NAL unit.
export function toAvc(payload) {
  const bytes = payload instanceof Uint8Array ? payload : new Uint8Array(payload);
  const units = nalUnits(bytes);
  let sps = null;
  let pps = null;
  const kept = [];
  for (const unit of units) {
    const type = unit[0] & 0x1f;
    if (type === SPS && unit.length >= 4 && unit.length <= MAX_PARAMETER_SET) sps = sps || unit;
    else if (type === PPS && unit.length <= MAX_PARAMETER_SET) pps = pps || unit;
    else kept.push(unit);
  }
  if (kept.length === 0 && !sps) return null;
  const data = new Uint8Array(kept.reduce((sum, unit) => sum + 4 + unit.length, 0));
  let offset = 0;
  for (const unit of kept) {
    new DataView(data.buffer).setUint32(offset, unit.length);
    data.set(unit, offset + 4);
    offset += 4 + unit.length;
  }
  if (!sps || !pps) return { data, description: null, codecString: null };
  const hex = (value) => value.toString(16).toUpperCase().padStart(2, '0');
  return { data, description: decoderConfigurationRecord(sps, pps), codecString: `avc1.${hex(sps[1])}${hex(sps[2])}${hex(sps[3])}` };
}

/// Whether two descriptions are the same bytes (a new one means the decoder must be configured again).
export function sameBytes(a, b) {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}
