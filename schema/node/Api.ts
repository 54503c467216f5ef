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
import {
  NodeError400,
  NodeError401,
  NodeError403,
  NodeError404,
  NodeError409,
  NodeError429,
  NodeError500,
  NodeError501,
  NodeError503
} from "./Errors.js"
import { Authenticated, PersonOnly } from "./Security.js"
import { Discovery, NodeHealth, NodeInfo } from "./System.js"
import { ArtifactsGroup, WidgetArtifactsGroup } from "./Artifact.js"
import { ComposerGroup } from "./Composer.js"
import { DeletionGroup } from "./Deletion.js"
import { InboxGroup, WorkGroup } from "./Inbox.js"
import { MapsGroup } from "./Maps.js"
import { PackagesGroup } from "./Package.js"
import { PreferencesGroup } from "./Preferences.js"
import { AppIntentsGroup, ThemesGroup } from "./Theme.js"
import { WidgetsGroup } from "./Widget.js"

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
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("send", "/conversations/:id/messages")
      .setPath(ConversationPath)
      .setPayload(MessageRequest)
      .addSuccess(MessageResult)
      .addSuccess(MessageResult, { status: 202 })
      .addError(NodeError404)
      .addError(NodeError409)
      .addError(NodeError503)
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("stream", "/conversations/:id/messages/stream")
      .setPath(ConversationPath)
      .setPayload(MessageRequest)
      .addSuccess(EventStream)
      .addError(NodeError404)
      .addError(NodeError409)
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("stop", "/conversations/:id/stop")
      .setPath(ConversationPath)
      .setPayload(StopRequest)
      .addSuccess(StopResult)
      .addError(NodeError404)
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("timeline", "/conversations/:id/timeline")
      .setPath(ConversationPath)
      .setUrlParams(TimelineParams)
      .addSuccess(Timeline)
      .addError(NodeError404)
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
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("cancel", "/conversations/:id/questions/:questionId/cancel")
      .setPath(QuestionPath)
      .addSuccess(QuestionState)
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("askAgain", "/conversations/:id/questions/:questionId/ask-again")
      .setPath(QuestionPath)
      .addSuccess(QuestionState)
      .middleware(Authenticated)
  )
  .addError(NodeError404)
  .addError(NodeError409)
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
      .addError(NodeError404)
      .addError(NodeError409)
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
  .add(WidgetArtifactsGroup)
  .add(ArtifactsGroup)
  .add(InboxGroup)
  .add(WorkGroup)
  .add(PackagesGroup)
  .add(ThemesGroup)
  .add(AppIntentsGroup)
  .add(MapsGroup)
  .add(PreferencesGroup)
  .addError(NodeError400)
  .addError(NodeError401)
  .addError(NodeError403)
  .addError(NodeError429)
  .addError(NodeError500)
  .addError(NodeError501)
  .annotateContext(
    OpenApi.annotations({
      title: "Clark Node API",
      version: "1.0.0",
      description: "The stable REST surface of a local Clark node."
    })
  )
{}
