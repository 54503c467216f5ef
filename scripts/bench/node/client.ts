/** The driver's HTTP client: node:http with keep-alive agents, streams on their own agent; SSE read and timed. */
import * as http from "node:http"
import { assertRunning, type Child, childFailure } from "../Children.js"
import { mapLimit, now, sleep, withDeadline } from "./settings.js"

export interface Target {
  readonly label: string
  readonly port: number
  readonly token: string
  readonly child: Child
}

/**
 * A keep-alive socket the server closed while the request was on its way: retried (up to 3 times, another idle
 * socket may be just as stale), as Node's documentation advises; counted in the report.
 */
const isStaleSocket = (request: http.ClientRequest, error: Error) =>
  request.reusedSocket && (error as NodeJS.ErrnoException).code === "ECONNRESET"

/** The driver's counters: retried requests, streams open now and at most (reset per run). */
export const counters = { connectionRetries: 0, openNow: 0, openMax: 0 }

export const streamAgent = new http.Agent({ keepAlive: true, maxSockets: 600, maxFreeSockets: 600, scheduling: "lifo" })
export const controlAgent = new http.Agent({ keepAlive: true, maxSockets: 32, maxFreeSockets: 32 })

export const call = (
  target: Target,
  method: string,
  requestPath: string,
  body?: unknown,
  agent: http.Agent = controlAgent
): Promise<{ readonly status: number; readonly body: any }> =>
  new Promise((resolve, reject) => {
    const payload = body === undefined ? "" : JSON.stringify(body)
    const send = (retries: number) => {
      const request = http.request(
        {
          host: "127.0.0.1",
          port: target.port,
          method,
          path: requestPath,
          agent,
          headers: {
            authorization: `Bearer ${target.token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            "content-length": Buffer.byteLength(payload)
          }
        },
        (response) => {
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            let parsed: unknown = text
            try {
              parsed = text.length === 0 ? undefined : JSON.parse(text)
            } catch {
              // not JSON: kept as text
            }
            resolve({ status: response.statusCode ?? 0, body: parsed })
          })
          response.on("error", reject)
        }
      )
      request.on("error", (error) => {
        if (retries < 3 && isStaleSocket(request, error)) {
          counters.connectionRetries++
          return send(retries + 1)
        }
        reject(error)
      })
      request.end(payload)
    }
    send(0)
  })

export const expectStatus = async (
  promise: Promise<{ readonly status: number; readonly body: any }>,
  status: number,
  what: string
) => {
  const response = await promise
  if (response.status !== status) {
    throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body).slice(0, 400)} (expected ${status})`)
  }
  return response.body
}

export const waitHealthy = async (target: Target) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    assertRunning(target.child)
    try {
      // Bounded: a server that listens before it serves leaves a request unanswered, and that one is given up.
      if ((await withDeadline(call(target, "GET", "/health"), 2_000, "GET /health")).status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  throw childFailure(target.child, "did not answer GET /health with 200 within 60 s")
}

/**
 * Closes the idle sockets the agents keep to `target`: the servers close a keep-alive socket after 5 s idle, and
 * with other servers measured in between, a socket kept from an earlier run may be closing as a run starts.
 */
export const dropIdleSockets = async (target: Target) => {
  for (const agent of [streamAgent, controlAgent]) {
    const name = agent.getName({ host: "127.0.0.1", port: target.port })
    for (const socket of [...(agent.freeSockets[name] ?? [])]) socket.destroy()
  }
  // The agents take a socket out of their pool on its close event, which follows destroy() on the next tick.
  await new Promise((resolve) => setImmediate(resolve))
}

/** Opens `count` new idle keep-alive sockets on the stream agent, so streams do not pay for connecting. */
export const warmSockets = async (target: Target, count: number) => {
  await dropIdleSockets(target)
  await Promise.all(Array.from({ length: count }, () => call(target, "GET", "/health", undefined, streamAgent)))
}

export const createConversations = async (target: Target, count: number) => {
  await dropIdleSockets(target)
  return mapLimit(Array.from({ length: count }, (_, i) => i), 16, async (i) => {
    const body = await expectStatus(call(target, "POST", "/conversations", { title: `bench ${i}` }), 201, "POST /conversations")
    return String(body.conversationId)
  })
}

export interface SseStream {
  readonly conversationId: string
  sentAt: number
  status: number | undefined
  /** When the response's head arrived (with the node's opening comment, when it sends one). */
  respondedAt: number | undefined
  /** Arrival time of the first event of any kind (a block with an `event:` line). */
  firstEventAt: number | undefined
  /** Arrival time of every `delta` event (the chunk it came in). */
  readonly deltas: Array<number>
  /** Delivery latency of every `delta` event whose text is a stamp, in ms: arrival minus stamp. */
  readonly delivery: Array<number>
  doneAt: number | undefined
  endedAt: number | undefined
  resolution: string | undefined
  error: string | undefined
  readonly ended: Promise<void>
  readonly firstDelta: Promise<void>
  readonly abort: () => void
}

/** The stamp in a `delta` event's text (the monotonic clock in ns when it was produced), if it is one. */
const stampOf = (block: string): bigint | undefined => {
  try {
    const text: unknown = JSON.parse(block.slice(block.indexOf("\ndata: ") + 7)).text
    return typeof text === "string" && /^\d+$/.test(text) ? BigInt(text) : undefined
  } catch {
    return undefined
  }
}

export const openStream = (target: Target, conversationId: string, text: string): SseStream => {
  const payload = JSON.stringify({ text })
  let markEnded!: () => void
  let markFirst!: () => void
  let failFirst!: (error: Error) => void
  const ended = new Promise<void>((resolve) => (markEnded = resolve))
  const firstDelta = new Promise<void>((resolve, reject) => {
    markFirst = resolve
    failFirst = reject
  })
  firstDelta.catch(() => undefined)
  let counted = false
  let finished = false
  const finish = (error?: string) => {
    if (finished) return
    finished = true
    if (counted) counters.openNow--
    if (error !== undefined && stream.error === undefined) stream.error = error
    if (stream.deltas.length === 0) failFirst(new Error(stream.error ?? "ended before its first delta"))
    markEnded()
  }
  const onResponse = (response: http.IncomingMessage) => {
    stream.status = response.statusCode
    stream.respondedAt = now()
    counted = true
    counters.openNow++
    counters.openMax = Math.max(counters.openMax, counters.openNow)
    let buffer = ""
    response.setEncoding("utf8")
    response.on("data", (chunk: string) => {
      const at = now()
      const arrival = process.hrtime.bigint()
      buffer += chunk
      let boundary = buffer.indexOf("\n\n")
      while (boundary !== -1) {
        const block = buffer.slice(0, boundary)
        buffer = buffer.slice(boundary + 2)
        boundary = buffer.indexOf("\n\n")
        if (stream.firstEventAt === undefined && /(^|\n)event: /.test(block)) stream.firstEventAt = at
        if (block.includes("\nevent: delta\n")) {
          stream.deltas.push(at)
          const stamp = stampOf(block)
          if (stamp !== undefined) stream.delivery.push(Number(arrival - stamp) / 1e6)
          if (stream.deltas.length === 1) markFirst()
        } else if (block.includes("\nevent: done\n")) {
          stream.doneAt = at
          const data = block.slice(block.indexOf("\ndata: ") + 7)
          try {
            stream.resolution = String(JSON.parse(data).resolution)
          } catch {
            stream.resolution = "(unreadable)"
          }
        }
      }
    })
    response.on("end", () => {
      stream.endedAt = now()
      finish(response.statusCode === 200 ? undefined : `status ${response.statusCode}: ${buffer.slice(0, 200)}`)
    })
    response.on("error", (error) => finish(error.message))
    response.on("close", () => finish("closed before its end"))
  }
  let request: http.ClientRequest | undefined
  const send = (retries: number) => {
    const sent = http.request(
      {
        host: "127.0.0.1",
        port: target.port,
        method: "POST",
        path: `/conversations/${conversationId}/messages/stream`,
        agent: streamAgent,
        headers: {
          authorization: `Bearer ${target.token}`,
          accept: "text/event-stream",
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload)
        }
      },
      onResponse
    )
    sent.on("error", (error) => {
      if (retries < 3 && stream.status === undefined && isStaleSocket(sent, error)) {
        counters.connectionRetries++
        stream.sentAt = now()
        return send(retries + 1)
      }
      finish(error.message)
    })
    request = sent
    sent.end(payload)
  }
  const stream: SseStream = {
    conversationId,
    sentAt: now(),
    status: undefined,
    respondedAt: undefined,
    firstEventAt: undefined,
    deltas: [],
    delivery: [],
    doneAt: undefined,
    endedAt: undefined,
    resolution: undefined,
    error: undefined,
    ended,
    firstDelta,
    abort: () => request?.destroy(new Error("aborted by the benchmark"))
  }
  send(0)
  return stream
}

export const awaitAll = async (streams: ReadonlyArray<SseStream>, ms: number, what: string) => {
  try {
    await withDeadline(Promise.all(streams.map((s) => s.ended)), ms, what)
  } catch (error) {
    const open = streams.filter((s) => s.endedAt === undefined && s.error === undefined).length
    for (const s of streams) s.abort()
    throw new Error(`${error instanceof Error ? error.message : String(error)} (${open} of ${streams.length} still open)`)
  }
}

export const failures = (streams: ReadonlyArray<SseStream>, resolution: string) =>
  streams.filter((s) => s.status !== 200 || s.error !== undefined || s.endedAt === undefined || s.resolution !== resolution)

export const describeFailures = (bad: ReadonlyArray<SseStream>) =>
  bad.slice(0, 3).map((s) => `status ${s.status}, resolution ${s.resolution}, error ${s.error}`).join("; ")
