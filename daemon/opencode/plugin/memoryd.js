// memoryd's OpenCode plugin: memory arrives in every session by itself.
// Installed by `memoryd opencode install`; remove with `memoryd opencode uninstall`.
// memoryd-plugin-version: __MEMORYD_PLUGIN_VERSION__
//
// What it does (and nothing else):
// - each session's system prompt gets memoryd's block (hard rules, routing, inventory,
//   memories relevant to the first prompt), appended to the LAST system element so
//   OpenCode still sends one system message; the title generator is left alone;
// - the block is fetched once per session (daemon socket, else `memoryd context --json`)
//   and kept byte-identical; it is replaced only when memoryd's generation changes;
// - compaction is given the inventory and an instruction to save lessons first;
// - when a session goes idle, the daemon is told, so its note is written now.
// Every hook has short timeouts and swallows its own errors: a session never breaks
// or waits long because of memory. Set MEMORYD_PLUGIN_OFF=1 to switch it off.

import { execFile } from "node:child_process"

const SOCKET = process.env.MEMORYD_SOCKET || __MEMORYD_SOCKET__
const COMMAND = __MEMORYD_COMMAND__
const PAYLOAD_VERSION = 1
// How often a cached block asks whether the trees changed (the env override is for tests).
const RECHECK_MS = Number(process.env.MEMORYD_PLUGIN_RECHECK_MS) || 10000
const COMMAND_TIMEOUT_MS = 5000
const MAX_SESSIONS = 200 // cached sessions kept by a long-running `opencode serve`
const TITLE_MARK = "title generator" // in system[0] of OpenCode's title request

function valid(payload) {
  if (!payload || typeof payload !== "object" || payload.version !== PAYLOAD_VERSION) return false
  if (typeof payload.enabled !== "boolean") return false
  return !payload.enabled || (typeof payload.block === "string" && typeof payload.generation === "string")
}

export const MemorydPlugin = async ({ client, directory, worktree }) => {
  if (process.env.MEMORYD_PLUGIN_OFF === "1") return {}
  const home = worktree && worktree !== "/" ? worktree : directory
  const prompts = new Map() // sessionID -> first prompt text
  const sessions = new Map() // sessionID -> { payload, checkedAt, viaDaemon, pending }
  let timeoutMs = 800

  function log(level, message, extra) {
    try {
      const done = client?.app?.log?.({ body: { service: "memoryd", level, message, extra } })
      done?.catch?.(() => {})
    } catch {
      // logging must never be the thing that breaks a session
    }
  }

  async function fromDaemon(prompt) {
    const query = new URLSearchParams({ dir: directory || home || "", prompt })
    const response = await fetch(`http://memoryd/context?${query}`, {
      unix: SOCKET,
      signal: AbortSignal.timeout(timeoutMs),
    })
    if (!response.ok) throw new Error(`memoryd daemon answered ${response.status}`)
    const payload = await response.json()
    if (!valid(payload)) throw new Error("memoryd daemon sent an unexpected answer")
    return payload
  }

  function fromCommand(prompt) {
    const args = [...COMMAND.slice(1), "context", "--json", "--dir", directory || home || ".", "--prompt", prompt]
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

  async function refresh(id, state) {
    const prompt = prompts.get(id) || ""
    try {
      const payload = await fromDaemon(prompt)
      timeoutMs = Math.min(Math.max(payload.timeout_ms || timeoutMs, 50), 10000)
      // Same generation: keep the bytes already sent, so the prompt cache holds.
      if (!state.payload || state.payload.generation !== payload.generation) state.payload = payload
      state.viaDaemon = true
    } catch (error) {
      if (!state.payload) {
        try {
          state.payload = await fromCommand(prompt) // no daemon: once per session
        } catch (commandError) {
          log("warn", `memoryd: no memory for this session (${commandError.message || commandError})`)
          state.payload = { version: PAYLOAD_VERSION, enabled: false }
        }
      }
      state.viaDaemon = false
      log("debug", `memoryd daemon not reachable: ${error.message || error}`)
    }
    state.checkedAt = Date.now()
  }

  async function context(id) {
    let state = sessions.get(id)
    if (!state) {
      if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value)
      state = { payload: null, checkedAt: 0, viaDaemon: false, pending: null }
      sessions.set(id, state)
    }
    const due = !state.payload || (state.viaDaemon && Date.now() - state.checkedAt >= RECHECK_MS)
    if (due && !state.pending) {
      state.pending = refresh(id, state).finally(() => {
        state.pending = null
      })
    }
    if (state.pending && !state.payload) await state.pending
    return state.payload
  }

  return {
    "chat.message": async (input, output) => {
      // Only read the prompt: parts added here would be saved into the session.
      try {
        if (!input?.sessionID || prompts.has(input.sessionID)) return
        const text = (output?.parts || [])
          .filter((part) => part?.type === "text" && !part.synthetic && typeof part.text === "string")
          .map((part) => part.text)
          .join("\n")
        if (text) prompts.set(input.sessionID, text.slice(0, 4000))
        if (prompts.size > MAX_SESSIONS) prompts.delete(prompts.keys().next().value)
      } catch (error) {
        log("warn", `memoryd chat.message: ${error.message || error}`)
      }
    },

    "experimental.chat.system.transform": async (input, output) => {
      try {
        const system = output?.system
        if (!input?.sessionID || !Array.isArray(system) || system.length === 0) return
        if (String(system[0]).toLowerCase().includes(TITLE_MARK)) return
        const payload = await context(input.sessionID)
        if (!payload?.enabled || !payload.block) return
        const last = system.length - 1
        if (String(system[last]).includes(payload.block)) return
        system[last] = `${system[last]}\n\n${payload.block}`
      } catch (error) {
        log("warn", `memoryd system.transform: ${error.message || error}`)
      }
    },

    "experimental.session.compacting": async (input, output) => {
      try {
        if (!input?.sessionID || !Array.isArray(output?.context)) return
        const payload = await context(input.sessionID)
        if (payload?.enabled && payload.compaction) output.context.push(payload.compaction)
      } catch (error) {
        log("warn", `memoryd compacting: ${error.message || error}`)
      }
    },

    event: async ({ event }) => {
      try {
        if (event?.type === "session.deleted") {
          const id = event.properties?.info?.id
          sessions.delete(id)
          prompts.delete(id)
          return
        }
        if (event?.type !== "session.idle" || !event.properties?.sessionID) return
        await fetch("http://memoryd/idle", {
          method: "POST",
          unix: SOCKET,
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ session_id: event.properties.sessionID }),
          signal: AbortSignal.timeout(500),
        })
      } catch (error) {
        log("debug", `memoryd idle notice not delivered: ${error.message || error}`)
      }
    },
  }
}
