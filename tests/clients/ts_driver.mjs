// Drive `python3 code/main.py serve` with the official TypeScript SDK client, the way an
// application built on it would: Client + StdioClientTransport, the capabilities it declares,
// an elicitation handler that plays a scripted user, a roots handler.
//
//   node ts_driver.mjs SCENARIO.json
//
// SCENARIO (JSON):
//   sdk          "v1" (@modelcontextprotocol/sdk) or "v2" (@modelcontextprotocol/client)
//   era          v2 only: "legacy" (default), "auto", or a pinned revision like "2026-07-28"
//   server       {command, args, cwd}
//   roots        list of file:// URIs, or null to declare no roots capability
//   elicitation  the declared elicitation capability ({"form": {}, "url": {}}), or null
//   answers      the scripted user: one entry per elicitation, in order:
//                {action, content?, delayMs?}; the delay is the user's thinking time
//   steps        [{op: "listTools"}, {op: "callTool", name, arguments, timeoutMs?,
//                abortAfterMs?, progress?}, {op: "setRoots", roots}, {op: "waitFor", method,
//                timeoutMs}, {op: "sleep", ms}]
//
// It prints one JSON object per line as things happen ({"event": "elicitation", ...},
// {"event": "step", ...}) and finally {"event": "report", ...} with every message it received
// or sent (the raw wire as the client saw it, late responses included).
//
// Without `timeoutMs` a call uses the SDK's own default request timeout (60 s in both SDKs).

import { readFileSync } from "node:fs";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const started = Date.now();
const now = () => Date.now() - started;
const emit = (event) => process.stdout.write(JSON.stringify({ t: now(), ...event }) + "\n");

function packageVersion(name) {
  const file = new URL(`./node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(file, "utf8")).version;
}

async function loadSdk(name) {
  if (name === "v1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const types = await import("@modelcontextprotocol/sdk/types.js");
    const { DEFAULT_REQUEST_TIMEOUT_MSEC } = await import("@modelcontextprotocol/sdk/shared/protocol.js");
    const version = packageVersion("@modelcontextprotocol/sdk");
    return {
      package: `@modelcontextprotocol/sdk@${version}`, Client, StdioClientTransport,
      defaultTimeout: DEFAULT_REQUEST_TIMEOUT_MSEC,
      onRequest: (client, method, handler) => client.setRequestHandler(
        method === "elicitation/create" ? types.ElicitRequestSchema : types.ListRootsRequestSchema,
        handler),
      // v1 takes (params, resultSchema, options)
      callTool: (client, params, options) => client.callTool(params, undefined, options),
      options: () => ({}),
    };
  }
  if (name === "v2") {
    const sdk = await import("@modelcontextprotocol/client");
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    const version = packageVersion("@modelcontextprotocol/client");
    const era = scenario.era ?? "legacy";
    return {
      package: `@modelcontextprotocol/client@${version}`, Client: sdk.Client, StdioClientTransport,
      defaultTimeout: sdk.DEFAULT_REQUEST_TIMEOUT_MSEC,
      onRequest: (client, method, handler) => client.setRequestHandler(method, handler),
      callTool: (client, params, options) => client.callTool(params, options),
      options: () => ({
        versionNegotiation: { mode: era === "legacy" || era === "auto" ? era : { pin: era } },
      }),
    };
  }
  throw new Error(`unknown sdk ${name}`);
}

// -- the raw wire, as the client sees it --------------------------------------------------------
const messages = [];
const waiters = [];

function record(dir, message) {
  messages.push({ t: now(), dir, message });
  if (dir === "in") {
    for (const waiter of [...waiters]) {
      if (waiter.matches(message)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  }
}

function tap(transport) {
  let handler;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => handler,
    set: (fn) => {
      handler = fn && ((message, extra) => { record("in", message); return fn(message, extra); });
    },
  });
  const send = transport.send.bind(transport);
  transport.send = (message, options) => { record("out", message); return send(message, options); };
}

function waitFor(method, timeoutMs) {
  const seen = messages.find((m) => m.dir === "in" && m.message.method === method);
  if (seen) return Promise.resolve(seen.message);
  return new Promise((resolve, reject) => {
    const waiter = { matches: (m) => m.method === method, resolve };
    waiters.push(waiter);
    setTimeout(() => {
      if (waiters.includes(waiter)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`no ${method} within ${timeoutMs} ms`));
      }
    }, timeoutMs);
  });
}

// -- the scripted user ----------------------------------------------------------------------------
const answers = [...(scenario.answers ?? [])];
let roots = scenario.roots ?? null;
let rootsAsked = 0;
const rootsAskedWaiters = [];

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(Object.assign(new Error("form closed: the server cancelled it"), { aborted: true }));
    }, { once: true });
  });
}

async function elicit(request, extra) {
  const signal = extra?.signal ?? extra?.mcpReq?.signal;
  const id = extra?.requestId ?? extra?.mcpReq?.id ?? null;
  const params = request.params;
  emit({ event: "elicitation", id, mode: params.mode ?? "form", params });
  const answer = answers.shift() ?? { action: "cancel" };
  try {
    if (answer.delayMs) await sleep(answer.delayMs, signal);
  } catch (error) {
    emit({ event: "elicitation_closed", id, reason: String(signal?.reason ?? "") });
    throw error;
  }
  const result = { action: answer.action };
  if (answer.content) result.content = answer.content;
  emit({ event: "elicitation_answered", id, aborted: Boolean(signal?.aborted), result });
  return result;
}

async function listRoots() {
  rootsAsked += 1;
  for (const resolve of rootsAskedWaiters.splice(0)) resolve();
  return { roots: (roots ?? []).map((uri) => ({ uri, name: uri.replace(/\/$/, "").split("/").pop() })) };
}

const VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const STATELESS = "2026-07-28";

function negotiatedVersion(client) {
  const fromSdk = client.getNegotiatedProtocolVersion?.();
  if (fromSdk) return fromSdk;
  const enveloped = messages.find((m) => m.dir === "out" && m.message.params?._meta?.[VERSION_KEY]);
  if (enveloped) return enveloped.message.params._meta[VERSION_KEY];
  const asked = messages.find((m) => m.dir === "out" && m.message.method === "initialize");
  const answer = asked && messages.find((m) => m.dir === "in" && m.message.id === asked.message.id);
  return answer?.message.result?.protocolVersion ?? null;
}

// -- steps ----------------------------------------------------------------------------------------
function describeError(error) {
  return { name: error?.constructor?.name ?? "Error", code: error?.code ?? null,
           message: String(error?.message ?? error), data: error?.data ?? null };
}

async function runStep(sdk, client, step) {
  switch (step.op) {
    case "listTools":
      return (await client.listTools()).tools.map((tool) => tool.name);
    case "callTool": {
      const options = {};
      if (step.timeoutMs) options.timeout = step.timeoutMs;
      if (step.abortAfterMs) {
        const controller = new AbortController();
        setTimeout(() => controller.abort(new Error("the user pressed stop")), step.abortAfterMs);
        options.signal = controller.signal;
      }
      if (step.progress) {
        options.onprogress = (progress) => emit({ event: "progress", progress });
      }
      return await sdk.callTool(client, { name: step.name, arguments: step.arguments ?? {} },
                                options);
    }
    case "setRoots": {
      roots = step.roots;
      if (negotiatedVersion(client) === STATELESS) {
        // no list_changed at 2026-07-28: the next request that needs roots asks for them
        return { rootsAsked, notified: false };
      }
      const asked = new Promise((resolve) => rootsAskedWaiters.push(resolve));
      await client.sendRootsListChanged();
      await Promise.race([asked, sleep(step.timeoutMs ?? 10000).then(() => {
        throw new Error("the server did not ask roots/list again");
      })]);
      return { rootsAsked, notified: true };
    }
    case "waitFor":
      return (await waitFor(step.method, step.timeoutMs ?? 10000)).params ?? {};
    case "sleep":
      await sleep(step.ms);
      return null;
    default:
      throw new Error(`unknown step ${step.op}`);
  }
}

async function main() {
  const sdk = await loadSdk(scenario.sdk ?? "v1");
  const capabilities = {};
  if (roots !== null) capabilities.roots = { listChanged: true };
  if (scenario.elicitation) capabilities.elicitation = scenario.elicitation;
  const client = new sdk.Client({ name: "notas-ts-driver", version: "1.0.0" },
                                { capabilities, ...sdk.options() });
  if (scenario.elicitation) sdk.onRequest(client, "elicitation/create", elicit);
  if (roots !== null) sdk.onRequest(client, "roots/list", listRoots);
  const transport = new sdk.StdioClientTransport({
    command: scenario.server.command, args: scenario.server.args, cwd: scenario.server.cwd,
    stderr: "pipe",
  });
  const stderr = [];
  transport.stderr?.on("data", (chunk) => stderr.push(chunk.toString()));
  tap(transport);
  const errors = [];
  client.onerror = (error) => errors.push(String(error?.message ?? error));

  const steps = [];
  let connected = false;
  try {
    await client.connect(transport);
    connected = true;
    emit({ event: "connected", protocolVersion: negotiatedVersion(client) });
    for (const [index, step] of (scenario.steps ?? []).entries()) {
      const begin = now();
      let outcome;
      try {
        outcome = { ok: true, result: await runStep(sdk, client, step) };
      } catch (error) {
        outcome = { ok: false, error: describeError(error) };
      }
      const entry = { index, op: step.op, name: step.name ?? step.method ?? null,
                      ms: now() - begin, ...outcome };
      steps.push(entry);
      emit({ event: "step", ...entry });
    }
  } catch (error) {
    steps.push({ index: -1, op: "connect", ok: false, error: describeError(error) });
  } finally {
    if (connected) await client.close().catch(() => {});
  }
  emit({
    event: "report", sdk: sdk.package, node: process.version, defaultTimeoutMs: sdk.defaultTimeout,
    protocolVersion: negotiatedVersion(client), serverVersion: client.getServerVersion?.() ?? null,
    initialize: messages.find((m) => m.dir === "out" && m.message.method === "initialize")?.message ?? null,
    steps, rootsAsked, clientErrors: errors, messages, serverStderr: stderr.join(""),
  });
}

main().then(() => process.exit(0), (error) => {
  emit({ event: "crash", error: describeError(error), stack: error?.stack ?? null });
  process.exit(1);
});
