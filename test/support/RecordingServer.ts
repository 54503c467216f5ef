/**
 * A local HTTP server standing in for a model provider: it records every
 * request (method, URL, headers, parsed JSON body) and answers with whatever
 * reply the test sets. Hooks start it once per file and clear the record
 * before each test.
 */
import { afterAll, beforeAll, beforeEach } from "@effect/vitest"
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: any
}

export interface RecordingServer {
  /** `http://127.0.0.1:PORT` followed by the path given to `useRecordingServer`. */
  readonly baseUrl: string
  readonly received: Array<Received>
  reply: (res: ServerResponse) => void
}

export const useRecordingServer = (basePath = ""): RecordingServer => {
  let server: Server
  const state: { baseUrl: string; received: Array<Received>; reply: (res: ServerResponse) => void } = {
    baseUrl: "",
    received: [],
    reply: (res) => res.writeHead(500).end()
  }
  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = ""
      req.setEncoding("utf8")
      req.on("data", (chunk: string) => {
        raw += chunk
      })
      req.on("end", () => {
        state.received.push({
          method: req.method ?? "",
          url: req.url ?? "",
          headers: req.headers,
          body: raw.length === 0 ? undefined : JSON.parse(raw)
        })
        state.reply(res)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${basePath}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  beforeEach(() => {
    state.received.length = 0
  })
  return state
}
