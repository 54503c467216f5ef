/**
 * Tiny, valid audio files built byte by byte, so the tests know their exact
 * duration and need no binary fixtures: WAV (PCM), MP3 (silent MPEG-1 Layer
 * III frames), Ogg Opus (header pages plus one audio page whose granule
 * position states the length) and WebM (EBML header, Info with Duration, one
 * Opus track).
 */

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text)

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

// ---------------------------------------------------------------------------
// WAV

export interface WavOptions {
  readonly sampleRate: number
  readonly seconds: number
}

/** 8-bit mono PCM: one byte per sample, so `sampleRate` bytes per second. */
export const wav = ({ sampleRate, seconds }: WavOptions): Uint8Array => {
  const dataBytes = Math.round(sampleRate * seconds)
  const header = new DataView(new ArrayBuffer(44))
  const text = (at: number, value: string) => ascii(value).forEach((byte, i) => header.setUint8(at + i, byte))
  text(0, "RIFF")
  header.setUint32(4, 36 + dataBytes, true)
  text(8, "WAVE")
  text(12, "fmt ")
  header.setUint32(16, 16, true)
  header.setUint16(20, 1, true) // PCM
  header.setUint16(22, 1, true) // mono
  header.setUint32(24, sampleRate, true)
  header.setUint32(28, sampleRate, true) // byte rate
  header.setUint16(32, 1, true) // block align
  header.setUint16(34, 8, true) // bits per sample
  text(36, "data")
  header.setUint32(40, dataBytes, true)
  // 8-bit PCM is unsigned: 128 is silence.
  return concat([new Uint8Array(header.buffer), new Uint8Array(dataBytes).fill(128)])
}

// ---------------------------------------------------------------------------
// MP3

/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, mono, no CRC: 417-byte frames of 1,152 samples. */
const mp3FrameBytes = 417
export const mp3FrameSeconds = 1152 / 44_100

export const mp3 = (frames: number): Uint8Array => {
  const frame = new Uint8Array(mp3FrameBytes)
  frame.set([0xff, 0xfb, 0x90, 0xc0])
  // Zero side information and main data: a valid, silent frame.
  return concat(Array.from({ length: frames }, () => frame))
}

// ---------------------------------------------------------------------------
// Ogg Opus

const oggCrcTable = (() => {
  const table = new Uint32Array(256)
  for (let i = 0; i < 256; i++) {
    let r = i << 24
    for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1
    table[i] = r >>> 0
  }
  return table
})()

const oggCrc = (bytes: Uint8Array): number => {
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) ^ oggCrcTable[((crc >>> 24) & 0xff) ^ byte]!) >>> 0
  return crc
}

const oggPage = (packet: Uint8Array, options: { flags: number; granule: bigint; sequence: number }): Uint8Array => {
  const segments: Array<number> = []
  let left = packet.length
  while (left >= 255) {
    segments.push(255)
    left -= 255
  }
  segments.push(left)
  const header = new DataView(new ArrayBuffer(27 + segments.length))
  ascii("OggS").forEach((byte, i) => header.setUint8(i, byte))
  header.setUint8(4, 0)
  header.setUint8(5, options.flags)
  header.setBigUint64(6, options.granule, true)
  header.setUint32(14, 0x434c524b, true) // stream serial number
  header.setUint32(18, options.sequence, true)
  header.setUint32(22, 0, true) // CRC, filled in below
  header.setUint8(26, segments.length)
  segments.forEach((size, i) => header.setUint8(27 + i, size))
  const page = concat([new Uint8Array(header.buffer), packet])
  new DataView(page.buffer).setUint32(22, oggCrc(page), true)
  return page
}

const opusPreSkip = 312

export const oggOpus = (seconds: number): Uint8Array => {
  const head = new DataView(new ArrayBuffer(19))
  ascii("OpusHead").forEach((byte, i) => head.setUint8(i, byte))
  head.setUint8(8, 1) // version
  head.setUint8(9, 1) // channels
  head.setUint16(10, opusPreSkip, true)
  head.setUint32(12, 48_000, true)
  head.setUint16(16, 0, true) // output gain
  head.setUint8(18, 0) // channel mapping family
  const vendor = ascii("clark-test")
  const tags = new DataView(new ArrayBuffer(8 + 4 + vendor.length + 4))
  ascii("OpusTags").forEach((byte, i) => tags.setUint8(i, byte))
  tags.setUint32(8, vendor.length, true)
  vendor.forEach((byte, i) => tags.setUint8(12 + i, byte))
  tags.setUint32(12 + vendor.length, 0, true)
  // One 20 ms CELT frame of silence (TOC 0xf8 and no payload), enough to carry the final granule position.
  const audio = new Uint8Array([0xf8])
  const granule = BigInt(Math.round(seconds * 48_000) + opusPreSkip)
  return concat([
    oggPage(new Uint8Array(head.buffer), { flags: 0x02, granule: 0n, sequence: 0 }),
    oggPage(new Uint8Array(tags.buffer), { flags: 0, granule: 0n, sequence: 1 }),
    oggPage(audio, { flags: 0x04, granule, sequence: 2 })
  ])
}

// ---------------------------------------------------------------------------
// WebM

const ebmlSize = (size: number): Uint8Array => {
  // Eight-byte size form: 0x01 then seven bytes, simple and always valid.
  const out = new Uint8Array(8)
  out[0] = 0x01
  let rest = size
  for (let i = 7; i >= 1; i--) {
    out[i] = rest & 0xff
    rest = Math.floor(rest / 256)
  }
  return out
}

const element = (id: ReadonlyArray<number>, ...children: ReadonlyArray<Uint8Array>): Uint8Array => {
  const body = concat(children)
  return concat([new Uint8Array(id), ebmlSize(body.length), body])
}

const uint = (value: number): Uint8Array => {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, value)
  return out
}

const float64 = (value: number): Uint8Array => {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setFloat64(0, value)
  return out
}

/** `seconds: undefined` leaves Duration out: a WebM file that states no length. */
export const webm = (seconds: number | undefined): Uint8Array =>
  concat([
    element(
      [0x1a, 0x45, 0xdf, 0xa3],
      element([0x42, 0x86], uint(1)), // EBMLVersion
      element([0x42, 0xf7], uint(1)), // EBMLReadVersion
      element([0x42, 0xf2], uint(4)), // EBMLMaxIDLength
      element([0x42, 0xf3], uint(8)), // EBMLMaxSizeLength
      element([0x42, 0x82], ascii("webm")), // DocType
      element([0x42, 0x87], uint(4)), // DocTypeVersion
      element([0x42, 0x85], uint(2)) // DocTypeReadVersion
    ),
    element(
      [0x18, 0x53, 0x80, 0x67], // Segment
      element(
        [0x15, 0x49, 0xa9, 0x66], // Info
        element([0x2a, 0xd7, 0xb1], uint(1_000_000)), // TimecodeScale: 1 ms
        ...(seconds === undefined ? [] : [element([0x44, 0x89], float64(seconds * 1000))]), // Duration, in TimecodeScale units
        element([0x4d, 0x80], ascii("clark-test")), // MuxingApp
        element([0x57, 0x41], ascii("clark-test")) // WritingApp
      ),
      element(
        [0x16, 0x54, 0xae, 0x6b], // Tracks
        element(
          [0xae], // TrackEntry
          element([0xd7], uint(1)), // TrackNumber
          element([0x73, 0xc5], uint(1)), // TrackUID
          element([0x83], uint(2)), // TrackType: audio
          element([0x86], ascii("A_OPUS")), // CodecID
          element([0xe1], element([0xb5], float64(48_000)), element([0x9f], uint(1))) // Audio
        )
      )
    )
  ])
