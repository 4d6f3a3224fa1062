// memoryd's OpenCode plugin: memory arrives in every session by itself, on OpenCode 1.x
// and 2.x from this one file. Installed by `memoryd opencode install`; remove with
// `memoryd opencode uninstall`.
// memoryd-plugin-version: __MEMORYD_PLUGIN_VERSION__
//
// What it does (and nothing else):
// - each session's system prompt gets memoryd's block (hard rules, routing, inventory,
//   memories relevant to the first prompt), appended to the LAST system part so OpenCode
//   still sends one system message; the title request is left alone;
// - one block per session: the first one it gets (daemon socket, else `memoryd context
//   --json`) is kept byte-identical for the whole session, so prompt caches hold; only a
//   change of the hard rules replaces it;
// - compaction is given the inventory as it is now and an instruction to save lessons;
// - when a turn ends, the daemon is told, so the session's note is written now.
// Every hook has short timeouts and catches its own errors: a session never breaks or
// waits long because of memory. Set MEMORYD_PLUGIN_OFF=1 to switch it off.
//
// The default export serves both hosts: OpenCode 1.x calls `server` (hooks by name),
// OpenCode 2.x calls `setup(ctx)` (ctx.session.hook, ctx.event). OpenCode 1.x also calls
// `setup`, with a reduced ctx that has no `session`: `setup` then does nothing.

import { execFile } from "node:child_process"

const SOCKET = process.env.MEMORYD_SOCKET || __MEMORYD_SOCKET__
const COMMAND = __MEMORYD_COMMAND__
const PAYLOAD_VERSION = 1
// How often a session's block asks whether the hard rules changed (env override: tests).
const RECHECK_MS = Number(process.env.MEMORYD_PLUGIN_RECHECK_MS) || 10000
const COMMAND_TIMEOUT_MS = 5000
const NOTICE_TIMEOUT_MS = 500
const MAX_SESSIONS = 200 // sessions kept by a long-running server
const MAX_PROMPT = 4000
const TITLE_MARK = "title generator" // in system[0] of OpenCode 1.x's title request
const TURN_ENDS = new Set([
  "session.execution.succeeded",
  "session.execution.failed",
  "session.execution.interrupted",
])

function off() {
  return process.env.MEMORYD_PLUGIN_OFF === "1"
}

function reason(error) {
  return (error && error.message) || String(error)
}

function valid(payload) {
  if (!payload || typeof payload !== "object" || payload.version !== PAYLOAD_VERSION) return false
  if (typeof payload.enabled !== "boolean") return false
  return !payload.enabled || (typeof payload.block === "string" && typeof payload.generation === "string")
}

function keep(map, key, value) {
  map.set(key, value)
  if (map.size > MAX_SESSIONS) map.delete(map.keys().next().value)
}

// The memory of one OpenCode instance (a 1.x plugin call, a 2.x location), per session.
function createMemory(directory, log) {
  const prompts = new Map() // sessionID -> first prompt text
  const sessions = new Map() // sessionID -> { payload, checkedAt, pending }
  let timeoutMs = 800

  async function fromDaemon(id) {
    const query = new URLSearchParams({ dir: directory || "", prompt: prompts.get(id) || "", session: id })
    const response = await fetch(`http://memoryd/context?${query}`, {
      unix: SOCKET,
      signal: AbortSignal.timeout(timeoutMs),
    })
    if (!response.ok) throw new Error(`memoryd daemon answered ${response.status}`)
    const payload = await response.json()
    if (!valid(payload)) throw new Error("memoryd daemon sent an unexpected answer")
    timeoutMs = Math.min(Math.max(payload.timeout_ms || timeoutMs, 50), 10000)
    return payload
  }

  function fromCommand(id) {
    const prompt = prompts.get(id) || ""
    const args = [...COMMAND.slice(1), "context", "--json", "--dir", directory || ".", "--prompt", prompt, "--session", id]
    return new Promise((resolve, reject) => {
      execFile(COMMAND[0], args, { timeout: COMMAND_TIMEOUT_MS, maxBuffer: 1 << 20 }, (error, stdout) => {
        if (error) return reject(error)
        try {
          const payload = JSON.parse(stdout)
          if (!valid(payload)) throw new Error("`memoryd context --json` printed an unexpected answer")
          resolve(payload)
        } catch (parseError) {
          reject(parseError)
        }
      })
    })
  }

  // The current payload: the daemon's, else the command's; null when neither answers.
  async function current(id) {
    try {
      return await fromDaemon(id)
    } catch (error) {
      log("debug", `memoryd daemon not reachable: ${reason(error)}`)
    }
    try {
      return await fromCommand(id)
    } catch (error) {
      log("warn", `memoryd: no memory for this session (${reason(error)})`)
      return null
    }
  }

  // A later answer replaces the session's block only when the hard rules changed
  // (or when the session has no block yet): everything else waits for the next session.
  function adopt(state, payload) {
    if (!payload) return
    const had = state.payload
    if (!had || !had.enabled || (payload.enabled && payload.rules !== had.rules)) state.payload = payload
  }

  async function recheck(id, state) {
    try {
      adopt(state, await fromDaemon(id)) // never the command again: it costs a process
    } catch (error) {
      log("debug", `memoryd recheck: ${reason(error)}`)
    }
    state.checkedAt = Date.now()
  }

  async function payloadFor(id) {
    let state = sessions.get(id)
    if (!state) {
      state = { payload: null, checkedAt: 0, pending: null }
      keep(sessions, id, state)
    }
    if (!state.payload && !state.pending) {
      state.pending = current(id).then((payload) => {
        adopt(state, payload || { version: PAYLOAD_VERSION, enabled: false })
        state.checkedAt = Date.now()
      })
      state.pending.finally(() => (state.pending = null)).catch(() => {})
    } else if (!state.pending && Date.now() - state.checkedAt >= RECHECK_MS) {
      // In the background: this step keeps the block it has.
      state.pending = recheck(id, state).finally(() => (state.pending = null))
    }
    if (!state.payload && state.pending) await state.pending
    return state.payload
  }

  return {
    notePrompt(id, text) {
      if (!id || prompts.has(id) || typeof text !== "string" || !text) return
      keep(prompts, id, text.slice(0, MAX_PROMPT))
    },

    // The session's block, or "" when it gets none.
    async block(id) {
      if (!id) return ""
      const payload = await payloadFor(id)
      return payload && payload.enabled && payload.block ? payload.block : ""
    },

    // Compaction gets the inventory as it is now (falling back on the session's own).
    async compaction(id) {
      if (!id) return ""
      const fresh = await current(id)
      const payload = fresh && fresh.enabled ? fresh : sessions.get(id)?.payload
      return payload && payload.enabled && payload.compaction ? payload.compaction : ""
    },

    async idle(id) {
      if (!id) return
      try {
        await fetch("http://memoryd/idle", {
          method: "POST",
          unix: SOCKET,
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ session_id: id }),
          signal: AbortSignal.timeout(NOTICE_TIMEOUT_MS),
        })
      } catch (error) {
        log("debug", `memoryd idle notice not delivered: ${reason(error)}`)
      }
    },

    forget(id) {
      sessions.delete(id)
      prompts.delete(id)
    },
  }
}

// --- OpenCode 1.x ------------------------------------------------------------------------

function logVia(client) {
  return (level, message) => {
    try {
      const done = client?.app?.log?.({ body: { service: "memoryd", level, message } })
      done?.catch?.(() => {})
    } catch {
      // logging must never be the thing that breaks a session
    }
  }
}

async function server({ client, directory, worktree } = {}) {
  if (off()) return {}
  const log = logVia(client)
  const memory = createMemory(directory || (worktree && worktree !== "/" ? worktree : ""), log)
  return {
    "chat.message": async (input, output) => {
      // Only read the prompt: parts added here would be saved into the session.
      try {
        const text = (output?.parts || [])
          .filter((part) => part?.type === "text" && !part.synthetic && typeof part.text === "string")
          .map((part) => part.text)
          .join("\n")
        memory.notePrompt(input?.sessionID, text)
      } catch (error) {
        log("warn", `memoryd chat.message: ${reason(error)}`)
      }
    },

    "experimental.chat.system.transform": async (input, output) => {
      try {
        const system = output?.system
        if (!input?.sessionID || !Array.isArray(system) || system.length === 0) return
        if (String(system[0]).toLowerCase().includes(TITLE_MARK)) return
        const block = await memory.block(input.sessionID)
        const last = system.length - 1
        if (block && !String(system[last]).includes(block)) system[last] = `${system[last]}\n\n${block}`
      } catch (error) {
        log("warn", `memoryd system.transform: ${reason(error)}`)
      }
    },

    "experimental.session.compacting": async (input, output) => {
      try {
        if (!input?.sessionID || !Array.isArray(output?.context)) return
        const text = await memory.compaction(input.sessionID)
        if (text) output.context.push(text)
      } catch (error) {
        log("warn", `memoryd compacting: ${reason(error)}`)
      }
    },

    event: async ({ event } = {}) => {
      try {
        if (event?.type === "session.deleted") memory.forget(event.properties?.info?.id)
        else if (event?.type === "session.idle") await memory.idle(event.properties?.sessionID)
      } catch (error) {
        log("debug", `memoryd event: ${reason(error)}`)
      }
    },
  }
}

// --- OpenCode 2.x ------------------------------------------------------------------------

// Append `text` to the last system part (one system message), unless it is there already.
function appendSystem(system, text) {
  if (!text || !Array.isArray(system)) return
  const last = system[system.length - 1]
  if (!last || typeof last.text !== "string") system.push({ type: "text", text })
  else if (!last.text.includes(text)) last.text = `${last.text}\n\n${text}`
}

// Tell the daemon when a turn ends (2.x has no session.idle); forget deleted sessions.
async function listen(events, memory) {
  for await (const event of events.subscribe({})) {
    try {
      if (TURN_ENDS.has(event?.type)) memory.idle(event.data?.sessionID).catch(() => {})
      else if (event?.type === "session.deleted") memory.forget(event.data?.sessionID)
    } catch {
      // one odd event must not end the subscription
    }
  }
}

async function setup(ctx) {
  if (off() || typeof ctx?.session?.hook !== "function") return // 1.x's reduced ctx: nothing to do
  const log = () => {} // 2.x gives plugins no logger; the CLI's terminal is not ours
  const location = ctx.location || {}
  const memory = createMemory(location.directory || location.project?.directory || process.cwd(), log)
  const guarded = (name, fn) =>
    ctx.session.hook(name, async (event) => {
      try {
        await fn(event || {})
      } catch {
        // in 2.x a throwing hook fails the user's turn: never let one escape
      }
    })
  await guarded("prompt", (event) => memory.notePrompt(event.sessionID, event.prompt?.text))
  await guarded("context", async (event) => appendSystem(event.system, await memory.block(event.sessionID)))
  await guarded("compaction", async (event) => appendSystem(event.system, await memory.compaction(event.sessionID)))
  if (typeof ctx.event?.subscribe === "function") listen(ctx.event, memory).catch(() => {})
}

export default { id: "memoryd", server, setup }
