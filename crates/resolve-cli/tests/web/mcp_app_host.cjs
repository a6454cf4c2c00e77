// A minimal MCP Apps host for resolve's review app (crates/resolve-cli/tests/suite/mcp_app_browser.rs):
// it talks to a real `resolve mcp` child over stdio, stages a 2-file preview with `apply_patch`,
// reads the `ui://` resource the tool links, and renders it in Chromium inside a host page built
// on the official SDK's AppBridge (@modelcontextprotocol/ext-apps, bundled for the browser by
// esbuild from node_modules; nothing comes from the network), through a sandbox proxy served on
// another origin (localhost rather than 127.0.0.1). The app's `tools/call` and
// `resources/read` are relayed to the child. Puppeteer then rejects one hunk with a reason and
// applies with a reason; the last stdout line is JSON of what happened.
//
// Env: RESOLVE_BIN, RESOLVE_ROOT, RESOLVE_CHROMIUM, RESOLVE_PUPPETEER_DIR, SCREENSHOTS.
"use strict";

const http = require("node:http");
const path = require("node:path");
const { spawn } = require("node:child_process");

const modules = path.join(process.env.RESOLVE_PUPPETEER_DIR, "node_modules");
const puppeteer = require(path.join(modules, "puppeteer-core"));
const esbuild = require(path.join(modules, "esbuild"));

const PATCH = [
  "*** Begin Patch",
  "*** Update File: a.txt",
  "@@",
  "-1",
  "+one",
  " 2",
  "@@",
  " 11",
  "-12",
  "+twelve",
  "*** Update File: b.txt",
  "@@",
  "-b",
  "+B",
  "*** End Patch",
  "",
].join("\n");

/// A JSON-RPC client over the child's stdio (one JSON message a line).
function mcpChild() {
  const child = spawn(process.env.RESOLVE_BIN, ["mcp", "--root", process.env.RESOLVE_ROOT], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const waiting = new Map();
  let nextId = 1;
  let buffered = "";
  const relayed = [];
  child.stdout.on("data", (chunk) => {
    buffered += chunk;
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      if (message.id !== undefined && waiting.has(message.id) && message.method === undefined) {
        const { resolve, reject } = waiting.get(message.id);
        waiting.delete(message.id);
        if (message.error) reject(new Error(JSON.stringify(message.error)));
        else resolve(message.result);
      }
    }
  });
  const write = (message) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
  return {
    relayed,
    request(method, params) {
      const id = nextId++;
      write({ id, method, params });
      return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    },
    notify(method, params) { write({ method, params }); },
    close() { child.stdin.end(); return new Promise((resolve) => child.on("close", resolve)); },
  };
}

const HOST_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>test host</title>
<style>body{margin:0;font:14px system-ui}iframe{border:1px solid #888;width:900px;height:400px;display:block}</style></head>
<body><h1>Minimal MCP Apps host</h1><div id="slot"></div>
<script type="module">
import { AppBridge, PostMessageTransport } from "/bridge.js";
window.startApp = async (html, csp, toolArguments, toolResult) => {
  // A web host wraps the view in a sandbox proxy of another origin (localhost, not 127.0.0.1).
  const proxy = document.createElement("iframe");
  proxy.setAttribute("sandbox", "allow-scripts allow-same-origin");
  proxy.id = "sandbox";
  document.getElementById("slot").append(proxy);
  const bridge = new AppBridge(
    null,
    { name: "resolve-test-host", version: "1.0.0" },
    { serverTools: {}, serverResources: {}, updateModelContext: { text: {} } },
    { hostContext: { theme: "light", displayMode: "inline", platform: "web" } },
  );
  bridge.oncalltool = (params) => window.relay("tools/call", params);
  bridge.onreadresource = (params) => window.relay("resources/read", params);
  bridge.onupdatemodelcontext = async (params) => { window.modelContext = params; return {}; };
  bridge.onsizechange = ({ height }) => { if (height) proxy.style.height = height + "px"; };
  bridge.onsandboxready = () => bridge.sendSandboxResourceReady({ html, csp });
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: toolArguments });
    await bridge.sendToolResult(toolResult);
    window.appInitialized = true;
  };
  await bridge.connect(new PostMessageTransport(proxy.contentWindow, proxy.contentWindow));
  proxy.src = location.href.replace("127.0.0.1", "localhost") + "sandbox.html";
};
window.hostReady = true;
</script></body></html>`;

// The sandbox proxy: it loads the view's HTML in an inner iframe under a Content Security
// Policy built from the resource's `_meta.ui.csp` (the specification's restrictive default for
// what it leaves out) and passes every message that is not `ui/notifications/sandbox-*` between
// the host and the view.
const SANDBOX_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><style>body{margin:0}iframe{border:0;width:100%;height:100vh;display:block}</style></head>
<body><script>
const inner = document.createElement("iframe");
inner.setAttribute("sandbox", "allow-scripts");
document.body.append(inner);
const own = (message) => typeof message.method === "string" && message.method.startsWith("ui/notifications/sandbox-");
function policy(csp) {
  const list = (domains, otherwise) => (domains && domains.length ? domains.join(" ") : otherwise);
  const resources = (csp.resourceDomains || []).join(" ");
  return ["default-src 'none'", "script-src 'self' 'unsafe-inline' " + resources, "style-src 'self' 'unsafe-inline' " + resources,
    "img-src 'self' data: " + resources, "font-src 'self' " + resources, "media-src 'self' data: " + resources,
    "connect-src " + list(csp.connectDomains, "'none'"), "frame-src " + list(csp.frameDomains, "'none'"),
    "object-src 'none'", "base-uri " + list(csp.baseUriDomains, "'self'")].join("; ");
}
window.addEventListener("message", (event) => {
  const message = event.data;
  if (!message || message.jsonrpc !== "2.0") return;
  if (event.source === window.parent) {
    if (message.method === "ui/notifications/sandbox-resource-ready") {
      const meta = '<meta http-equiv="Content-Security-Policy" content="' + policy(message.params.csp || {}) + '">';
      inner.srcdoc = message.params.html.replace("<head>", "<head>" + meta);
    } else if (!own(message)) {
      inner.contentWindow.postMessage(message, "*");
    }
  } else if (event.source === inner.contentWindow && !own(message)) {
    window.parent.postMessage(message, "*");
  }
});
window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, "*");
</script></body></html>`;

async function bridgeBundle() {
  const built = await esbuild.build({
    stdin: {
      contents: 'export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";',
      resolveDir: modules,
    },
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "error",
  });
  return built.outputFiles[0].text;
}

function serve(bridge) {
  const server = http.createServer((request, response) => {
    if (request.url === "/") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(HOST_PAGE);
    } else if (request.url === "/bridge.js") {
      response.writeHead(200, { "content-type": "text/javascript" });
      response.end(bridge);
    } else if (request.url === "/sandbox.html") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(SANDBOX_PAGE);
    } else if (request.url === "/favicon.ico") {
      response.writeHead(204);
      response.end();
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

async function main() {
  const out = {};
  const mcp = mcpChild();
  const initialized = await mcp.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
    clientInfo: { name: "resolve-test-host", version: "1.0.0" },
  });
  mcp.notify("notifications/initialized", {});
  out.serverExtensions = initialized.capabilities.extensions || null;

  const tools = (await mcp.request("tools/list", {})).tools;
  const producer = tools.find((tool) => tool.name === "apply_patch");
  const uri = producer._meta.ui.resourceUri;
  out.resourceUri = uri;
  const resource = (await mcp.request("resources/read", { uri })).contents[0];
  out.mimeType = resource.mimeType;

  const toolArguments = { input: PATCH };
  const staged = await mcp.request("tools/call", { name: "apply_patch", arguments: toolArguments });
  out.pendingId = staged._meta["resolve/details"].pendingId;

  const server = await serve(await bridgeBundle());
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await puppeteer.launch({
    executablePath: process.env.RESOLVE_CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
  const external = [];
  const cspViolations = [];
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1000, height: 900 });
    page.on("request", (request) => {
      const target = request.url();
      const own = [url, url.replace("127.0.0.1", "localhost"), "about:", "data:"];
      if (!own.some((prefix) => target.startsWith(prefix))) external.push(target);
    });
    page.on("console", (message) => {
      // The SDK logs every message it parses and sends; keep the rest.
      if (/Content Security Policy/.test(message.text())) cspViolations.push(message.text());
      if (!/^(Parsed|Sending) message/.test(message.text())) process.stderr.write(`console: ${message.text()}\n`);
    });
    page.on("pageerror", (error) => process.stderr.write(`pageerror: ${error.message}\n`));
    await page.exposeFunction("relay", async (method, params) => {
      mcp.relayed.push({ method, name: params.name, arguments: params.arguments, uri: params.uri });
      return mcp.request(method, params);
    });
    await page.goto(url);
    await page.waitForFunction(() => window.hostReady === true);
    const csp = (resource._meta && resource._meta.ui && resource._meta.ui.csp) || {};
    await page.evaluate((html, policy, args, result) => window.startApp(html, policy, args, result), resource.text, csp, toolArguments, staged);
    await page.waitForFunction(() => window.appInitialized === true, { timeout: 15000 });
    const proxyFrame = await (await page.waitForSelector("iframe#sandbox")).contentFrame();
    out.sandboxOrigin = await proxyFrame.evaluate(() => location.origin);
    let frame;
    for (let tries = 0; !frame && tries < 100; tries += 1) {
      frame = proxyFrame.childFrames()[0];
      if (!frame) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await frame.waitForSelector('.hunk[data-address="a.txt#2"]', { timeout: 15000 });
    out.title = await frame.$eval("#title", (node) => node.textContent);
    out.addresses = await frame.$$eval(".hunk", (nodes) => nodes.map((node) => node.dataset.address));
    out.files = await frame.$$eval(".file > h2", (nodes) => nodes.map((node) => node.textContent));
    await page.screenshot({ path: path.join(process.env.SCREENSHOTS, "mcp-app-review.png"), fullPage: true });

    await frame.click('.hunk[data-address="a.txt#2"] button.reject');
    await frame.type('.hunk[data-address="a.txt#2"] .hunk-reason', "Keep the number.");
    await frame.type("#reason", "Words read better.");
    await frame.click("#apply");
    await frame.waitForFunction(() => !document.getElementById("result").hidden, { timeout: 15000 });
    await frame.waitForFunction(() => /Done|Not decided/.test(document.getElementById("status").textContent), { timeout: 15000 });
    out.resultText = await frame.$eval("#result", (node) => node.textContent);
    out.status = await frame.$eval("#status", (node) => node.textContent);
    out.decideHidden = await frame.$eval("#decide", (node) => node.hidden);
    out.summary = await frame.$eval("#summary", (node) => node.textContent);
    out.modelContext = await page.evaluate(() => window.modelContext || null);
    await page.screenshot({ path: path.join(process.env.SCREENSHOTS, "mcp-app-applied.png"), fullPage: true });
  } finally {
    await browser.close();
    server.close();
  }
  out.relayed = mcp.relayed;
  out.external = external;
  out.cspViolations = cspViolations;
  await mcp.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
