/** Code that runs in the children: the node's preload (memory, CPU, delta → bytes) and the reference server. */

/**
 * Loaded into the node with `--import`: samples of its own memory and CPU over IPC, every 100 ms and
 * on request ("gc" first runs a full collection; the child runs with --expose-gc for it).
 *
 * It also measures what the node adds per delta, inside the node: every write that hands bytes to a socket
 * (net.Socket's _write and _writev, which run when the bytes go to the kernel, after any cork) is scanned
 * for stamped deltas (\`"text":"<hrtime>"\`), and the time from each stamp to the end of that write is
 * kept; "written" sends the values kept since the last "written" and starts again.
 */
export const preloadSource = `
import net from "node:net"
let written = []
const marker = '"text":"'
const scan = (chunk, at) => {
  const text = typeof chunk === "string" ? chunk : chunk.latin1Slice(0, chunk.length)
  for (let i = text.indexOf(marker); i !== -1; i = text.indexOf(marker, i + 1)) {
    const start = i + marker.length
    const end = text.indexOf('"', start)
    const digits = text.slice(start, end)
    // A stamp is one hrtime reading; a reply's text in the done event is many of them run together.
    if (end !== -1 && /^[0-9]{6,20}$/.test(digits) && BigInt(digits) <= at) written.push(Number(at - BigInt(digits)) / 1e6)
  }
}
for (const name of ["_write", "_writev"]) {
  const original = net.Socket.prototype[name]
  net.Socket.prototype[name] = function (data, ...rest) {
    const result = original.call(this, data, ...rest)
    const at = process.hrtime.bigint()
    if (name === "_write") scan(data, at)
    else for (const entry of data) scan(entry.chunk, at)
    return result
  }
}
const sample = (kind) => {
  const m = process.memoryUsage()
  const c = process.cpuUsage()
  try {
    process.send?.({ kind, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, cpuMicros: c.user + c.system })
  } catch {}
}
setInterval(() => sample("tick"), 100).unref()
process.on("message", (message) => {
  if (message === "gc" && typeof globalThis.gc === "function") globalThis.gc()
  if (message === "gc" || message === "sample") sample("reply")
  if (message === "written") {
    try {
      process.send?.({ kind: "written", values: written })
    } catch {}
    written = []
  }
})
process.channel?.unref()
`

/**
 * The reference: plain node:http, the same kind of SSE bytes on the same timers (a setTimeout per delta,
 * the next one set after the write), each delta stamped with process.hrtime.bigint() at its write, no
 * storage, no framework. Like the node it reads the whole body and parses its JSON before it answers (the
 * text says which kind of turn: a burst turn writes fewer deltas); it checks no token. It writes the
 * node's opening comment at once and its first delta right after it, as the scripted model does.
 * Started with `node -e`.
 */
export const referenceSource = `
const http = require("node:http")
const [deltas, burstDeltas, delay, port] = process.argv.slice(1).map(Number)
let task = 0
http.createServer((req, res) => {
  if (req.method === "GET") return res.end('{"status":"ok"}')
  const chunks = []
  req.on("data", (chunk) => chunks.push(chunk))
  req.on("end", () => {
    let text = ""
    try {
      text = String(JSON.parse(Buffer.concat(chunks).toString("utf8")).text)
    } catch {
      res.writeHead(400, { "content-type": "application/json" })
      return res.end('{"code":"INVALID_INPUT","message":"not JSON"}')
    }
    const count = text.startsWith("burst") ? burstDeltas : deltas
    const id = "task_" + ++task
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    res.write(": connected\\n\\n")
    let seq = 0
    const send = () => {
      seq++
      res.write("id: " + id + ":" + seq + "\\nevent: delta\\ndata: " + JSON.stringify({ text: String(process.hrtime.bigint()) }) + "\\n\\n")
      if (seq < count) return setTimeout(send, delay)
      res.end("id: " + id + ":" + (seq + 1) + "\\nevent: done\\ndata: " + JSON.stringify({ resolution: "answered" }) + "\\n\\n")
    }
    send()
  })
}).listen(port, "127.0.0.1")
`
