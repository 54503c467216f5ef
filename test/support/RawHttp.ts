/**
 * HTTP/1.1 at the byte level, for tests where framing is the point: sends the
 * bytes given, reads one response (by its content-length, or to the end of the
 * connection) and reports whether the connection was reset before it came.
 */
import { Effect } from "effect"
import * as net from "node:net"

export interface RawResponse {
  readonly status: number | undefined
  readonly headers: Record<string, string>
  readonly text: string
  readonly body: any
  /** The connection failed (reset) before a whole response arrived. */
  readonly reset: boolean
}

const parseResponse = (bytes: Buffer, reset: boolean): RawResponse => {
  const raw = bytes.toString("utf8")
  const end = raw.indexOf("\r\n\r\n")
  if (end === -1) return { status: undefined, headers: {}, text: raw, body: undefined, reset }
  const [statusLine, ...lines] = raw.slice(0, end).split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const text = raw.slice(end + 4)
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: Number(statusLine!.split(" ")[1]), headers, text, body, reset }
}

/** Whether `bytes` hold a complete response framed by content-length. */
const complete = (bytes: Buffer): boolean => {
  const head = bytes.indexOf("\r\n\r\n")
  if (head === -1) return false
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(bytes.subarray(0, head).toString("latin1"))
  return length !== null && bytes.length - head - 4 >= Number(length[1])
}

/** Writes `parts` in order to a new connection to `baseUrl` and reads one response. */
export const exchange = (baseUrl: string, parts: ReadonlyArray<string | Buffer>) =>
  Effect.async<RawResponse>((resume) => {
    const { hostname, port } = new URL(baseUrl)
    const socket = net.connect({ host: hostname, port: Number(port) })
    const received: Array<Buffer> = []
    let done = false
    const finish = (reset: boolean) => {
      if (done) return
      done = true
      socket.destroy()
      resume(Effect.succeed(parseResponse(Buffer.concat(received), reset)))
    }
    socket.on("data", (chunk: Buffer) => {
      received.push(chunk)
      if (complete(Buffer.concat(received))) finish(false)
    })
    socket.on("end", () => finish(false))
    socket.on("close", () => finish(false))
    socket.on("error", () => finish(true))
    socket.on("connect", () => {
      for (const part of parts) {
        if (socket.destroyed) break
        socket.write(part)
      }
    })
    return Effect.sync(() => socket.destroy())
  })

/** A request head with the given lines (CRLF added), ending the head. */
export const head = (lines: ReadonlyArray<string>): string => lines.map((line) => `${line}\r\n`).join("") + "\r\n"
