/**
 * Widget instances as they appear in paths
 * (`/conversations/{id}/widgets/{instanceId}`). Kept apart from Widget.ts and
 * Artifact.ts so both can use it without importing each other.
 */
import { Schema } from "effect"
import { ConversationId } from "./Conversation.js"

/** A widget instance id; an unknown one is 404 INSTANCE_UNKNOWN, so only the length is checked here. */
export const InstanceId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

/** Prefix of every widget route. */
export const widgetPrefix = "/conversations/:id/widgets/:instanceId"

export const WidgetPath = Schema.Struct({ id: ConversationId, instanceId: InstanceId })
export type WidgetPath = typeof WidgetPath.Type

/** Ids that are looked up (jobs, artifacts, notices, work): unknown ones are 404s, so only the length is checked. */
export const LookupId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
