/**
 * The node HTTP contract, shared by the server, the typed client and the CLI.
 * Each authenticated endpoint declares `Authenticated` or `PersonOnly`.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AnswerRequest,
  ConversationList,
  ConversationPath,
  CreateConversation,
  CreatedConversation,
  EmergencyStopResult,
  MessageRequest,
  MessageResult,
  QuestionPath,
  QuestionState,
  StopRequest,
  StopResult,
  Timeline,
  TimelineParams
} from "./Conversation.js"
import { type OpenApiDocument, withoutComponents, withoutKeywordIds } from "../common/OpenApiDocument.js"
import { refusals } from "./Errors.js"
import { Authenticated, PersonOnly } from "./Security.js"
import { Discovery, NodeHealth, NodeInfo } from "./System.js"
import { ArtifactsGroup, WidgetArtifactsGroup } from "./Artifact.js"
import { ComposerGroup } from "./Composer.js"
import { DeletionGroup } from "./Deletion.js"
import { InboxGroup } from "./Inbox.js"
import { WorkGroup } from "./Work.js"
import { MapsGroup } from "./Maps.js"
import { PackagesGroup } from "./Package.js"
import { PreferencesGroup } from "./Preferences.js"
import { AppIntentsGroup, ThemesGroup } from "./Theme.js"
import { WidgetsGroup } from "./Widget.js"
import { OfferedActionsGroup } from "./OfferedAction.js"

/**
 * The description as served: valid OpenAPI 3.1, and without Effect's own
 * request-decoding error, which `HttpApi.make` declares on every route but the
 * node never answers (its error middleware turns it into 400 INVALID_INPUT).
 */
const nodeDocument = (document: OpenApiDocument) =>
  describeRefusals(withoutComponents(["HttpApiDecodeError"])(withoutKeywordIds(document)))

const refusalRef = /^#\/components\/schemas\/NodeError\.([A-Z_]+)$/

/** Each error response described by the codes it may carry (the generator names only the first). */
const describeRefusals = (document: OpenApiDocument): OpenApiDocument => {
  for (const item of Object.values<Record<string, any>>(document.paths ?? {})) {
    for (const operation of Object.values<Record<string, any>>(item)) {
      for (const [status, response] of Object.entries<Record<string, any>>(operation.responses ?? {})) {
        const schema = response.content?.["application/json"]?.schema
        const refs: Array<unknown> = schema === undefined ? [] : schema.anyOf?.map((member: any) => member.$ref) ?? [schema.$ref]
        const codes = refs.flatMap((ref) => typeof ref === "string" ? (refusalRef.exec(ref)?.slice(1) ?? []) : [])
        if (Number(status) >= 400 && codes.length > 0) response.description = codes.join(", ")
      }
    }
  }
  return document
}

export const EventStream = HttpApiSchema.Text({ contentType: "text/event-stream" })

export class PublicGroup extends HttpApiGroup.make("public")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(NodeHealth))
  .add(HttpApiEndpoint.get("discovery", "/.well-known/app.json").addSuccess(Discovery))
  .add(
    HttpApiEndpoint.get("openapi", "/openapi.json")
      .addSuccess(Schema.Unknown)
      .annotate(OpenApi.Description, "This description")
  )
{}

export class ConversationsGroup extends HttpApiGroup.make("conversations")
  .add(HttpApiEndpoint.get("node", "/node").addSuccess(NodeInfo).middleware(Authenticated))
  .add(HttpApiEndpoint.get("list", "/conversations").addSuccess(ConversationList).middleware(Authenticated))
  .add(
    HttpApiEndpoint.post("create", "/conversations")
      .setPayload(CreateConversation)
      .addSuccess(CreatedConversation, { status: 201 })
      .addError(refusals("INVALID_INPUT"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("send", "/conversations/:id/messages")
      .setPath(ConversationPath)
      .setPayload(MessageRequest)
      .addSuccess(MessageResult)
      .addSuccess(MessageResult, { status: 202 })
      .addError(refusals("INVALID_INPUT", "REFERENCE_NOT_AVAILABLE", "RESOURCE_NOT_FOUND"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("stream", "/conversations/:id/messages/stream")
      .setPath(ConversationPath)
      .setPayload(MessageRequest)
      .addSuccess(EventStream)
      // INVALID_INPUT also for a Last-Event-ID the node did not write.
      .addError(refusals("INVALID_INPUT", "REFERENCE_NOT_AVAILABLE", "RESOURCE_NOT_FOUND"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("stop", "/conversations/:id/stop")
      .setPath(ConversationPath)
      .setPayload(StopRequest)
      .addSuccess(StopResult)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("timeline", "/conversations/:id/timeline")
      .setPath(ConversationPath)
      .setUrlParams(TimelineParams)
      .addSuccess(Timeline)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND"))
      .middleware(Authenticated)
  )
  .add(HttpApiEndpoint.post("emergencyStop", "/stop").addSuccess(EmergencyStopResult).middleware(Authenticated))
{}

export class QuestionsGroup extends HttpApiGroup.make("questions")
  .add(
    HttpApiEndpoint.post("answer", "/conversations/:id/questions/:questionId/answer")
      .setPath(QuestionPath)
      .setPayload(AnswerRequest)
      .addSuccess(QuestionState)
      .addError(refusals("QUESTION_CLOSED"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("cancel", "/conversations/:id/questions/:questionId/cancel")
      .setPath(QuestionPath)
      .addSuccess(QuestionState)
      .addError(refusals("QUESTION_CLOSED"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("askAgain", "/conversations/:id/questions/:questionId/ask-again")
      .setPath(QuestionPath)
      .addSuccess(QuestionState)
      .addError(refusals("QUESTION_OPEN", "QUESTION_CLOSED", "ALREADY_ASKED_AGAIN"))
      .middleware(Authenticated)
  )
  // Every question route has a path; the answer also a payload.
  .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND"))
{}

export const HostControlPath = Schema.Struct({ controlId: Schema.String.pipe(Schema.maxLength(64)) })
export const HostControlAnswer = Schema.Struct({ ran: Schema.Boolean, say: Schema.String.pipe(Schema.maxLength(2000)) })
export const HostControlRecorded = Schema.Struct({ controlId: Schema.String, ran: Schema.Boolean })

export class HostControlGroup extends HttpApiGroup.make("hostControl")
  .add(
    HttpApiEndpoint.post("answer", "/app-intents/host-control/:controlId")
      .setPath(HostControlPath)
      .setPayload(HostControlAnswer)
      .addSuccess(HostControlRecorded)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "HOST_CONTROL_ANSWERED"))
      .middleware(PersonOnly)
  )
{}

export class NodeApi extends HttpApi.make("node")
  .add(PublicGroup)
  .add(ConversationsGroup)
  .add(QuestionsGroup)
  .add(HostControlGroup)
  .add(ComposerGroup)
  .add(DeletionGroup)
  .add(WidgetsGroup)
  .add(OfferedActionsGroup)
  .add(WidgetArtifactsGroup)
  .add(ArtifactsGroup)
  .add(InboxGroup)
  .add(WorkGroup)
  .add(PackagesGroup)
  .add(ThemesGroup)
  .add(AppIntentsGroup)
  .add(MapsGroup)
  .add(PreferencesGroup)
  // Any route can fail in a way nobody declared: a defect, answered without its internals.
  .addError(refusals("INTERNAL"))
  .annotateContext(
    OpenApi.annotations({
      title: "Clark Node API",
      version: "1.0.0",
      description: "The stable REST surface of a local Clark node.",
      transform: nodeDocument
    })
  )
{}
