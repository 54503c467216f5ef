/**
 * A Sigstore of the test's own on 127.0.0.1, to make real provenance bundles offline.
 *
 * One node:http server answers as Fulcio (`/api/v2/signingCert`: a certificate for an ephemeral key, with an
 * SCT from a CT log embedded) and as Rekor (`/api/v1/log/entries`: the entry with its signed entry
 * timestamp and inclusion proof), using `@sigstore/mock`'s CA, CT log and transparency log (real keys, real
 * X.509 and signatures; its nock wiring is not loaded). A second CA (`/rogue/api/v2/signingCert`) that no trust
 * root names issues certificates for the "another CA" case.
 *
 * Bundles are made by `@sigstore/sign` itself (DSSEBundleBuilder, FulcioSigner, RekorWitness, exactly what
 * `sigstore.attest` assembles) talking HTTP to that server, so they are what real signing produces. The
 * trusted root naming this CA and these logs is written as a `trusted_root.json` file; the product's verifier
 * reads it through `CC_SIGSTORE_TRUSTED_ROOT` / `trustedRootPath` and otherwise verifies as for Sigstore's own.
 */
import { bundleToJSON } from "@sigstore/bundle"
import { type CA, fulcioHandler, initializeCA, initializeCTLog } from "@sigstore/mock/dist/fulcio/index.js"
import { initializeTLog, rekorHandler } from "@sigstore/mock/dist/rekor/index.js"
import { generateKeyPair } from "@sigstore/mock/dist/util/key.js"
import { DSSEBundleBuilder, FulcioSigner, RekorWitness, type Signer } from "@sigstore/sign"
import { Effect } from "effect"
import { createHash, createPublicKey, createSign, type KeyObject } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { purl } from "../../../layers/registry/Provenance.js"

export const slsaV1 = "https://slsa.dev/provenance/v1"
export const inTotoPayloadType = "application/vnd.in-toto+json"

/** The workflow identity the mock CA certifies (the token's `sub`). */
export const builderIdentity = "https://ci.example.test/clark-examples/release.yml@refs/heads/main"

export interface MockSigstore {
  readonly url: string
  /** The trusted root (Sigstore's JSON form) naming this CA, CT log and transparency log. */
  readonly trustedRoot: object
  /** That trusted root as a file. */
  readonly trustedRootPath: string
  /** A DSSE bundle (JSON form, as npm serves it) around `statement`, signed and logged for real. */
  readonly attest: (statement: object, options?: { readonly rogueCA?: boolean }) => Promise<object>
  /** A SLSA v1 provenance bundle whose in-toto subject is `name@version` with these sha512 (hex) bytes. */
  readonly provenance: (subject: { readonly name: string; readonly version: string; readonly sha512: string }, options?: { readonly rogueCA?: boolean }) => Promise<object>
  /**
   * npm's publish attestation: the statement DSSE-signed with the registry's key (its keyid as the hint, as
   * npm's registry signs it), logged in this Rekor.
   */
  readonly publishAttestation: (statement: object, key: { readonly keyid: string; readonly privateKey: KeyObject }) => Promise<object>
  /** Signing requests answered, by path (shows a bundle really went through this Fulcio and Rekor). */
  readonly requests: ReadonlyArray<string>
}

/** An in-toto statement of SLSA provenance v1 about one npm package version. */
export const provenanceStatement = (subject: { readonly name: string; readonly version: string; readonly sha512: string }) => ({
  _type: "https://in-toto.io/Statement/v1",
  subject: [{ name: purl(subject.name, subject.version), digest: { sha512: subject.sha512 } }],
  predicateType: slsaV1,
  predicate: {
    buildDefinition: {
      buildType: "https://ci.example.test/workflow/v1",
      externalParameters: { workflow: { ref: "refs/heads/main", repository: "https://ci.example.test/clark-examples", path: "release.yml" } },
      internalParameters: {},
      resolvedDependencies: [{ uri: "git+https://ci.example.test/clark-examples@refs/heads/main", digest: { gitCommit: "0".repeat(40) } }]
    },
    runDetails: { builder: { id: "https://ci.example.test/runner" }, metadata: { invocationId: "https://ci.example.test/runs/1" } }
  }
})

const b64 = (bytes: ArrayBufferView | Buffer) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/** An OIDC token as a CI provider issues it; the mock Fulcio reads its claims (it does not check a signature). */
const identityToken = () => {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
  const now = Math.floor(Date.now() / 1000)
  return `${part({ alg: "RS256", typ: "JWT" })}.${part({ iss: "https://token.ci.example.test", sub: builderIdentity, aud: "sigstore", iat: now, exp: now + 300 })}.${Buffer.from("unsigned").toString("base64url")}`
}

/** Starts the services for the test's scope. */
export const start = Effect.gen(function*() {
  const requests: Array<string> = []
  const handlers = new Map<string, (body: string) => Promise<{ statusCode: number; response: string | ArrayBufferView; contentType?: string }>>()
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const route = request.method === "POST" ? handlers.get(request.url ?? "") : undefined
      requests.push(request.url ?? "")
      if (route === undefined) return void response.writeHead(404).end()
      route(Buffer.concat(chunks).toString("utf8")).then(
        ({ contentType, response: body, statusCode }) =>
          void response.writeHead(statusCode, { "content-type": contentType ?? "text/plain" }).end(
            typeof body === "string" ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
          ),
        () => void response.writeHead(500).end()
      )
    })
  })
  yield* Effect.acquireRelease(
    Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
    () => Effect.async<void>((resume) => (server.closeAllConnections(), void server.close(() => resume(Effect.void))))
  )
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const services = yield* Effect.promise(async () => {
    const ctKeys = generateKeyPair("prime256v1")
    const ctlog = await initializeCTLog(ctKeys)
    const ca = await initializeCA(generateKeyPair("prime256v1"), ctlog)
    const rogue = await initializeCA(generateKeyPair("prime256v1"), await initializeCTLog(generateKeyPair("prime256v1")))
    const tlog = await initializeTLog(url, generateKeyPair("prime256v1"))
    return { ctlog, ca, rogue, tlog }
  })
  const register = (prefix: string, ca: CA) => {
    const fulcio = fulcioHandler(ca)
    handlers.set(`${prefix}${fulcio.path}`, fulcio.fn)
  }
  register("", services.ca)
  register("/rogue", services.rogue)
  const rekor = rekorHandler(services.tlog)
  handlers.set(rekor.path, rekor.fn)

  // Valid from an hour ago: the certificates the CA issues start now, and the root must cover them.
  const start = new Date(Date.now() - 3_600_000).toISOString()
  const logKey = (der: Buffer) => ({ rawBytes: der.toString("base64"), keyDetails: "PKIX_ECDSA_P256_SHA_256", validFor: { start } })
  const trustedRoot = {
    mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
    tlogs: [{
      baseUrl: url,
      hashAlgorithm: "SHA2_256",
      publicKey: logKey(services.tlog.publicKey),
      logId: { keyId: createHash("sha256").update(services.tlog.publicKey).digest("base64") }
    }],
    certificateAuthorities: [{
      subject: { organization: "sigstore.mock", commonName: "sigstore" },
      uri: url,
      certChain: { certificates: [{ rawBytes: b64(services.ca.rootCertificate) }] },
      validFor: { start }
    }],
    ctlogs: [{
      baseUrl: url,
      hashAlgorithm: "SHA2_256",
      publicKey: logKey(services.ctlog.publicKey),
      logId: { keyId: b64(services.ctlog.logID) }
    }],
    timestampAuthorities: []
  }
  const folder = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "clark-sigstore-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  const trustedRootPath = path.join(folder, "trusted_root.json")
  fs.writeFileSync(trustedRootPath, JSON.stringify(trustedRoot))

  const rekorWitness = () => new RekorWitness({ rekorBaseURL: url, entryType: "intoto", fetchOnConflict: false, retry: 0, timeout: 5_000 })
  const build = async (builder: DSSEBundleBuilder, statement: object) =>
    bundleToJSON(await builder.create({ data: Buffer.from(JSON.stringify(statement)), type: inTotoPayloadType })) as object

  const attest = (statement: object, options?: { readonly rogueCA?: boolean }) => {
    // As npm's publish signs provenance (`legacyCompatibility`): an intoto Rekor entry and a certificate chain.
    const builder = new DSSEBundleBuilder({
      certificateChain: true,
      signer: new FulcioSigner({
        fulcioBaseURL: options?.rogueCA ? `${url}/rogue` : url,
        identityProvider: { getToken: () => Promise.resolve(identityToken()) },
        retry: 0,
        timeout: 5_000
      }),
      witnesses: [rekorWitness()]
    })
    return build(builder, statement)
  }

  const publishAttestation = (statement: object, key: { readonly keyid: string; readonly privateKey: KeyObject }) => {
    const publicKey = createPublicKey(key.privateKey).export({ type: "spki", format: "pem" }).toString()
    const signer: Signer = {
      sign: async (data) => ({
        signature: createSign("SHA256").update(data).sign(key.privateKey),
        key: { $case: "publicKey", publicKey, hint: key.keyid }
      })
    }
    return build(new DSSEBundleBuilder({ signer, witnesses: [rekorWitness()] }), statement)
  }

  const running: MockSigstore = {
    url,
    trustedRoot,
    trustedRootPath,
    attest,
    provenance: (subject, options) => attest(provenanceStatement(subject), options),
    publishAttestation,
    requests
  }
  return running
})
