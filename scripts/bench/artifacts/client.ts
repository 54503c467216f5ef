/**
 * The chunk writer of `npm run bench:artifacts` in its own process (started with an IPC channel), so the node's
 * figures carry none of the client's work: the other benches drive their servers from outside too.
 *
 * On each `run` message it writes `chunks` chunks of `chunkBytes` bytes, one at a time over one keep-alive
 * connection (node:http), in files of `chunksPerFile` chunks (created, written, then discarded so the widget's
 * storage never fills), and answers the milliseconds from the first chunk to the last answer; in `floor` mode
 * as many GET /node requests instead. Each body is built
 * from buffers made once (the JSON around the base64 text), so the client costs little per chunk.
 */
import * as http from "node:http"
import { performance } from "node:perf_hooks"

export interface RunMessage {
  readonly kind: "run"
  readonly baseUrl: string
  readonly headers: Record<string, string>
  readonly prefix: string
  readonly chunks: number
  readonly chunksPerFile: number
  readonly chunkBytes: number
  /** `floor`: as many GET /node requests instead, the cost of a request without a body. */
  readonly mode?: "chunks" | "floor"
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

const request = (baseUrl: string, headers: Record<string, string>, method: string, path: string, body?: Buffer) =>
  new Promise<any>((resolve, reject) => {
    const url = new URL(path, baseUrl)
    const req = http.request(url, {
      method,
      agent,
      headers: body === undefined ? headers : { ...headers, "content-length": String(body.byteLength) }
    }, (response) => {
      const parts: Array<Buffer> = []
      response.on("data", (part: Buffer) => parts.push(part))
      response.on("end", () => {
        const text = Buffer.concat(parts).toString("utf8")
        if ((response.statusCode ?? 500) >= 300) reject(new Error(`${method} ${path}: ${response.statusCode} ${text}`))
        else resolve(text === "" ? undefined : JSON.parse(text))
      })
      response.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

const run = async (message: RunMessage) => {
  const { baseUrl, headers, prefix } = message
  const base64 = Buffer.from(Buffer.alloc(message.chunkBytes, 0x61).toString("base64"), "latin1")
  const head = (offset: number) => Buffer.from(`{"offset":${offset},"contentBase64":"`, "latin1")
  const tail = Buffer.from("\"}", "latin1")
  if (message.mode === "floor") {
    const started = performance.now()
    for (let i = 0; i < message.chunks; i++) await request(baseUrl, headers, "GET", "/node")
    return performance.now() - started
  }
  const started = performance.now()
  let artifactId = ""
  let offset = 0
  for (let i = 0; i < message.chunks; i++) {
    if (i % message.chunksPerFile === 0) {
      if (artifactId !== "") await request(baseUrl, headers, "DELETE", `${prefix}/${artifactId}`)
      const created = await request(baseUrl, headers, "POST", prefix, Buffer.from(JSON.stringify({ mimeType: "text/plain" })))
      artifactId = created.artifactRef.artifactId
      offset = 0
    }
    await request(baseUrl, headers, "POST", `${prefix}/${artifactId}/chunks`, Buffer.concat([head(offset), base64, tail]))
    offset += message.chunkBytes
  }
  const elapsed = performance.now() - started
  await request(baseUrl, headers, "DELETE", `${prefix}/${artifactId}`)
  return elapsed
}

process.on("message", (message: RunMessage | { readonly kind: "exit" }) => {
  if (message.kind === "exit") {
    agent.destroy()
    process.disconnect()
    return
  }
  run(message).then(
    (elapsed) => process.send?.({ kind: "done", elapsed }),
    (error) => process.send?.({ kind: "failed", message: String(error) })
  )
})
process.send?.({ kind: "ready" })
