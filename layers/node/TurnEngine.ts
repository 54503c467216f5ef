/**
 * The turn engine. Per conversation it owns the running turn (a fiber), the
 * messages waiting behind it and the steering decision; the parts live in
 * `turns/`: a turn and its event log (Turn), writing turns to the store
 * (Checkpoints), running one (Agent), questions, host-control, start-up
 * recovery. This module wires them and keeps the per-conversation state.
 */
import { Effect, Exit, Fiber, FiberSet, HashMap, Layer, Option, Ref } from "effect"
import { LRUCache } from "lru-cache"
import type { Block, MessageResult, TimelineEntry } from "../../schema/node/Conversation.js"
import { makeId } from "../../services/common/Ids.js"
import { OneShot } from "../../services/common/OneShot.js"
import { resolveAppIntent } from "../../services/node/AppIntents.js"
import { AuditLog } from "../../services/node/AuditLog.js"
import { ConversationNotFound, LastEventIdInvalid } from "../../services/node/ConversationErrors.js"
import { ConversationStore, type NewMessage } from "../../services/node/ConversationStore.js"
import { ModelProvider } from "../../services/node/ModelProvider.js"
import { PackageTools } from "../../services/node/PackageTools.js"
import { decide } from "../../services/node/Steering.js"
import { Transactions } from "../../services/node/Transactions.js"
import { placeWidgetTool, WidgetPlacement } from "../../services/node/WidgetPlacement.js"
import { OfferedActions, performTool } from "../../services/node/OfferedActions.js"
import { type Submission, TurnEngine } from "../../services/node/TurnEngine.js"
import * as Deadlines from "./services/Deadlines.js"
import * as Agent from "./turns/Agent.js"
import * as Checkpoints from "./turns/Checkpoints.js"
import * as HostControl from "./turns/HostControl.js"
import * as Pacing from "./turns/Pacing.js"
import * as Questions from "./turns/Questions.js"
import * as Recovery from "./turns/Recovery.js"
import { TurnSettings } from "./turns/Settings.js"
import * as Stopping from "./turns/Stopping.js"
import * as Waiting from "./turns/Waiting.js"
import { Composer } from "../../services/node/Composer.js"
import * as Tickets from "./turns/Tickets.js"
import * as Tools from "./turns/Tools.js"
import * as Turns from "./turns/Turn.js"
import type { Turn } from "./turns/Turn.js"

export { TurnSettings } from "./turns/Settings.js"

/** Conversations remembered as existing (none is ever deleted yet); bounded, so the memory does not grow. */
const knownConversations = 4096

export const make = (settings: TurnSettings) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const audit = yield* AuditLog
    const model = yield* ModelProvider
    // Optional: an engine without packages (tests of the engine alone) offers only its own tools.
    const packageTools = yield* Effect.serviceOption(PackageTools)
    const placement = yield* Effect.serviceOption(WidgetPlacement)
    const offers = yield* Effect.serviceOption(OfferedActions)
    const transactions = yield* Transactions
    const composer = yield* Composer
    const turns = yield* FiberSet.make<void>()
    /**
     * Turns run on the engine's own context, captured here, not on the submitting request's: a fork inherits its
     * parent's FiberRefs, and a turn started inside the start-up transaction would otherwise send its own statements
     * to that transaction's connection (and carry the request's span and log annotations for its whole life).
     */
    const runTurn = yield* FiberSet.runtime(turns)<never>()
    const states = yield* Ref.make(HashMap.empty<string, Stopping.ConversationState>())
    const closing = yield* Ref.make(false)
    /** Messages submitted so far: while they keep arriving, running turns' later steps let them go first. */
    let arrivals = 0
    /** Emergency stops and shutdowns in progress: while one ends every turn, the turns' steps are not paced. */
    let stoppingAll = 0
    const afterFirstEvent = Pacing.makeSliced(Pacing.sliceMs, () => arrivals, () => stoppingAll > 0)
    const known = new LRUCache<string, true>({ max: knownConversations })

    const requireConversation = (conversationId: string) =>
      known.has(conversationId) ? Effect.void : Effect.flatMap(
        store.get(conversationId),
        Option.match({
          onNone: () => Effect.fail(new ConversationNotFound({ conversationId })),
          onSome: () => Effect.sync(() => void known.set(conversationId, true))
        })
      )

    const stateOf = (conversationId: string) =>
      Ref.modify(states, (map) =>
        Option.match(HashMap.get(map, conversationId), {
          onSome: (state) => [state, map],
          onNone: () => {
            const state: Stopping.ConversationState = { lock: Effect.unsafeMakeSemaphore(1), running: undefined, waiting: [] }
            return [state, HashMap.set(map, conversationId, state)]
          }
        }))

    /** Runs `f` under the conversation's lock, on the state that is current once the lock is held. */
    const locked = <A, E, R>(conversationId: string, f: (state: Stopping.ConversationState) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.flatMap(stateOf(conversationId), (state) =>
        state.lock.withPermits(1)(Effect.flatMap(Ref.get(states), (map) =>
          Option.contains(HashMap.get(map, conversationId), state) ? f(state) : locked(conversationId, f))))

    /** An idle conversation's state is dropped, so the map holds only conversations with work; caller holds the lock. */
    const prune = (conversationId: string, state: Stopping.ConversationState) =>
      state.running === undefined && state.waiting.length === 0
        ? Ref.update(states, HashMap.remove(conversationId))
        : Effect.void

    const checkpoints = yield* Checkpoints.make(store, transactions, () => stoppingAll > 0)
    let engineSubmit: TurnEngine["Type"]["submit"] = () => Effect.dieMessage("not ready")
    const questions = yield* Questions.make({
      store,
      ttl: settings.questionTtl,
      requireConversation,
      submit: (submission) => Effect.suspend(() => engineSubmit(submission))
    })
    const hostControl = yield* HostControl.make({
      store,
      audit,
      wait: settings.hostControlWait,
      emit: (turn, data) => agent.emit(turn, "host-control", data)
    })

    const cancelWaiting = Waiting.cancel(store)

    // The per-start generators are made once here, not per call: on Node 20 a generator function made per call gets a
    // map of its own, which keeps what it captured alive through scavenges until a full collection (docs/decisions.md).
    const startTurn = (
      state: Stopping.ConversationState,
      submission: Submission,
      taskId: string,
      user: TimelineEntry,
      reply: TimelineEntry,
      history?: ReadonlyArray<TimelineEntry>
    ) =>
      Effect.sync(() => {
        const turn = Turns.make(submission, taskId, user, reply, history)
        state.running = turn
        // Until its first event the turn is part of its start; after it, its steps yield to new starts (Pacing). The
        // scheduler is the fiber's from its creation, not set by a `withScheduler` step inside it.
        turn.fiber = runTurn(agent.run(turn), { scheduler: Pacing.turnScheduler(() => turn.seq > 0, afterFirstEvent) })
        return turn
      })

    /** Starts the turn of a message that waited; the caller holds the conversation lock. */
    const startWaiting = Effect.fnUntraced(function*(state: Stopping.ConversationState, waiting: Tickets.Waiting) {
      const { conversationId } = waiting.submission
      const user = yield* store.updateMessage(conversationId, waiting.userMessageId, { status: "complete" })
      const reply = yield* store.insertMessage(Checkpoints.replyRow(conversationId, waiting.taskId))
      return yield* startTurn(state, waiting.submission, waiting.taskId, user.entry, reply)
    })

    const endedLocked = Effect.fnUntraced(function*(turn: Turn, state: Stopping.ConversationState) {
      if (state.running === turn) state.running = undefined
      const next = state.waiting.shift()
      if (next !== undefined) {
        if (yield* Ref.get(closing)) {
          const done = yield* cancelWaiting(turn.conversationId, next.userMessageId, next.taskId)
          next.started.done(Exit.succeed({ _tag: "Cancelled", done }))
        } else {
          const started = yield* startWaiting(state, next)
          next.started.done(Exit.succeed({ _tag: "Turn", turn: started }))
        }
      }
      yield* prune(turn.conversationId, state)
    })
    const ended = (turn: Turn) => locked(turn.conversationId, (state) => endedLocked(turn, state))

    const runTool = Tools.runner({ askUserQuestion: questions.ask, hostControl: hostControl.run }, packageTools, placement, {
      service: offers,
      emit: (turn, data) => agent.emit(turn, "widget-action-requested", data)
    })

    const agent = Agent.make({
      store,
      model,
      checkpoints,
      wallClock: settings.wallClock,
      deadlines: yield* Deadlines.make(yield* Effect.scope),
      runTool,
      nodeTools: [...(Option.isSome(placement) ? [placeWidgetTool] : []), ...(Option.isSome(offers) ? [performTool] : [])],
      packageTools: Option.match(packageTools, { onNone: () => Effect.succeed([]), onSome: (tools) => tools.offered }),
      ended,
      nextSteers: (turn) =>
        locked(turn.conversationId, () =>
          Effect.sync(() => {
            const steers = turn.steers.splice(0)
            if (steers.length === 0) turn.phase = "finishing"
            return steers
          }))
    })

    const submitLocked = Effect.fnUntraced(function*(submission: Submission, state: Stopping.ConversationState) {
      const { caller, conversationId, request } = submission
      const refs = request.references?.items ?? []
      // A start in a conversation not known yet (a burst's) reads nothing before its insert, whose first
      // statement finds the conversation or not; when nothing before it could answer (a retry, references).
      const checkedByInsert = request.clientRequestId === undefined && refs.length === 0 && !known.has(conversationId)
      // Inside the unit, not before it: a read of its own would wait for the group holding the connection.
      if (!checkedByInsert) yield* Effect.tapError(requireConversation(conversationId), () => prune(conversationId, state))
      if (request.clientRequestId !== undefined) {
        const seen = yield* store.clientRequest(conversationId, request.clientRequestId)
        if (Option.isSome(seen)) return Tickets.retried(store, conversationId, state.running, state.waiting, seen.value)
      }
      // Rule 7; the message stores each reference as resolved (paths inside the project, a notice's words).
      const resolved = yield* composer.resolve(refs)
      const blocks: Array<Block> = [{ type: "text", text: request.text }]
      if (refs.length > 0) blocks.push({ type: "references", version: 1, items: resolved })
      const intent = resolveAppIntent(request.text)
      const shuttingDown = yield* Ref.get(closing)
      const steering = intent !== undefined
        ? undefined
        : shuttingDown
        ? "wait"
        : decide(state.running, state.waiting.length, {
          origin: caller.surface,
          channel: caller.channel,
          route: submission.route,
          references: refs.length,
          attachments: request.attachmentIds?.length ?? 0
        })
      if (checkedByInsert && steering !== "start") yield* Effect.tapError(requireConversation(conversationId), () => prune(conversationId, state))
      const running = state.running
      const taskId = steering === "steer" ? running!.taskId : steering === undefined ? null : yield* makeId("task")
      const userRow: NewMessage = {
        conversationId,
        role: "user",
        origin: caller.surface,
        channel: caller.channel,
        status: steering === "wait" || steering === "interrupt" ? "waiting" : "complete",
        taskId,
        blocks,
        ...(submission.hostWritten === undefined ? {} : { hostWritten: submission.hostWritten })
      }
      // A message that starts a turn is stored with its reply in one transaction.
      const [user, reply] = steering === "start"
        ? yield* store.insertMessages(conversationId, [userRow, Checkpoints.replyRow(conversationId, taskId!)])
        : [yield* store.insertMessage(userRow)]
      if (user === undefined) {
        yield* prune(conversationId, state)
        return yield* new ConversationNotFound({ conversationId })
      }
      if (checkedByInsert) known.set(conversationId, true)
      yield* audit.append({
        kind: "message",
        conversationId,
        surface: caller.surface,
        channel: caller.channel,
        detail: { messageId: user.messageId, route: submission.route }
      })
      if (request.clientRequestId !== undefined) {
        yield* store.saveClientRequest(conversationId, request.clientRequestId, user.messageId, taskId)
      }
      switch (steering) {
        case undefined:
          return Tickets.immediate(
            [user.messageId],
            Effect.map(
              Tickets.resultOf(store, conversationId, null, "app-intent", [user.messageId]),
              (result): MessageResult => ({ ...result, appIntent: intent })
            )
          )
        case "steer":
          running!.steers.push(request.text)
          running!.entries.push(user)
          return Tickets.steered(running!)
        case "start": {
          // The conversation's first message has no history before it: nothing to read back.
          const entries = user.seq === 1 ? [user, reply!] : (yield* store.timeline(conversationId, 0)).entries
          return Tickets.own(yield* startTurn(state, submission, taskId!, user, reply!, entries))
        }
      }
      const waiting: Tickets.Waiting = {
        userMessageId: user.messageId,
        taskId: taskId!,
        submission,
        started: new OneShot<Tickets.Started, never>()
      }
      if (shuttingDown) {
        // Message rule 6: the node is shutting down, so the message is saved and cancelled before it starts.
        const done = yield* cancelWaiting(conversationId, user.messageId, waiting.taskId)
        waiting.started.done(Exit.succeed({ _tag: "Cancelled", done }))
        return Tickets.waiting(waiting, "waiting")
      }
      if (steering === "interrupt") {
        state.waiting.unshift(waiting)
        running!.stopNote = Agent.notes.interrupted
        yield* Fiber.interruptFork(running!.fiber!)
        return Tickets.waiting(waiting, "interrupting")
      }
      state.waiting.push(waiting)
      return Tickets.waiting(waiting, "waiting")
    })

    const submit: TurnEngine["Type"]["submit"] = (submission) =>
      Effect.suspend(() => {
        arrivals++
        // One unit of work, committed with the others that arrive meanwhile (SqlTransactions): the conversation's
        // check, the message rows, the audit entry, the client request and the history a new turn reads.
        return locked(submission.conversationId, (state) => transactions.atomically(submitLocked(submission, state)))
      })
    engineSubmit = submit

    const resume: TurnEngine["Type"]["resume"] = (conversationId, lastEventId) =>
      Effect.gen(function*() {
        yield* requireConversation(conversationId)
        const invalid = new LastEventIdInvalid({ given: lastEventId.slice(0, 80) })
        const parsed = Tickets.parseLastEventId(lastEventId)
        if (parsed === undefined) return yield* invalid
        const state = yield* stateOf(conversationId)
        return yield* Effect.flatMap(
          Tickets.resumed(store, conversationId, state.running, state.waiting, parsed.taskId, parsed.seq),
          Option.match({ onNone: () => Effect.fail(invalid), onSome: Effect.succeed })
        )
      })

    const stopping = Stopping.make({ states, locked, prune, cancelWaiting })
    const { stopConversation } = stopping
    const stopEverything = (note: string) =>
      Effect.acquireUseRelease(
        Effect.sync(() => void stoppingAll++),
        () => stopping.stopEverything(note),
        () => Effect.sync(() => void stoppingAll--)
      )

    const stop: TurnEngine["Type"]["stop"] = Effect.fnUntraced(function*(
      ...[conversationId, source, caller]: Parameters<TurnEngine["Type"]["stop"]>
    ) {
      yield* requireConversation(conversationId)
      const stopped = yield* stopConversation(conversationId, Agent.notes.stopped)
      yield* audit.append({
        kind: "stop",
        conversationId,
        surface: caller.surface,
        channel: caller.channel,
        detail: { source, stopped: stopped.turns > 0, waitingCancelled: stopped.waiting }
      })
      return stopped.turns > 0
    })

    const emergencyStop: TurnEngine["Type"]["emergencyStop"] = Effect.fnUntraced(function*(
      ...[caller]: Parameters<TurnEngine["Type"]["emergencyStop"]>
    ) {
      const stopped = yield* stopEverything(Agent.notes.emergency)
      // The turns' calls were cancelled with them; what still runs of the package services is stopped too.
      const commands = yield* Option.match(packageTools, { onNone: () => Effect.succeed(0), onSome: (t) => t.stopAll })
      const counts = { ...stopped, commands }
      yield* audit.append({ kind: "emergency-stop", surface: caller.surface, channel: caller.channel, detail: counts })
      return counts
    })

    const shutdown = Effect.zipRight(Ref.set(closing, true), stopEverything(Agent.notes.shutdown))

    const continueTask: TurnEngine["Type"]["continueTask"] = (continuation) =>
      Effect.gen(function*() {
        if (yield* Ref.get(closing)) return null
        const ticket = yield* submit({
          conversationId: continuation.conversationId,
          request: { text: `The person approved the step ${continuation.tool} of ${continuation.packageId}. Go on with the task.` },
          caller: { surface: continuation.origin, channel: "text" },
          route: "wait",
          hostWritten: { kind: "host-continuation", version: 1 }
        })
        return ticket.taskId
      }).pipe(Effect.catchAll(() => Effect.succeed(null)))

    yield* Recovery.recover(store)
    yield* questions.resumeExpiries
    // Also when the layer closes without the server's own shutdown step (tests, a failed start).
    yield* Effect.addFinalizer(() => shutdown)

    return TurnEngine.of({
      waitBudget: settings.waitBudget,
      submit,
      resume,
      stop,
      emergencyStop,
      shutdown,
      continueTask,
      isRunning: (conversationId) =>
        Effect.map(Ref.get(states), (map) => Option.exists(HashMap.get(map, conversationId), (s) => s.running !== undefined)),
      answerHostControl: hostControl.answer,
      answerQuestion: questions.answer,
      cancelQuestion: questions.cancel,
      askAgain: questions.askAgain
    })
  })

export const layer = (settings: TurnSettings) => Layer.scoped(TurnEngine, make(settings))

export const layerConfig = Layer.unwrapEffect(Effect.map(Effect.orDie(TurnSettings), layer))
