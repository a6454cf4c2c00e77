// A minimal MCP Apps host for resolve's review app (crates/resolve-cli/tests/mcp_app_browser.rs):
// it talks to a real `resolve mcp` child over stdio, stages a 2-file preview with `apply_patch`,
// reads the `ui://` resource the tool links, and renders it in Chromium inside a host page built
// on the official SDK's AppBridge (@modelcontextprotocol/ext-apps, bundled for the browser by
// esbuild from node_modules; nothing comes from the network). The app's `tools/call` and
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
<style>body{margin:0;font:14px system-ui}iframe{border:1px solid #888;width:900px;height:400px}</style></head>
<body><h1>Minimal MCP Apps host</h1><div id="slot"></div>
<script type="module">
import { AppBridge, PostMessageTransport } from "/bridge.js";
window.startApp = async (html, toolArguments, toolResult) => {
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.id = "app";
  document.getElementById("slot").append(iframe);
  const bridge = new AppBridge(
    null,
    { name: "resolve-test-host", version: "1.0.0" },
    { serverTools: {}, serverResources: {}, updateModelContext: { text: {} } },
    { hostContext: { theme: "light", displayMode: "inline", platform: "web" } },
  );
  bridge.oncalltool = (params) => window.relay("tools/call", params);
  bridge.onreadresource = (params) => window.relay("resources/read", params);
  bridge.onupdatemodelcontext = async (params) => { window.modelContext = params; return {}; };
  bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = height + "px"; };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: toolArguments });
    await bridge.sendToolResult(toolResult);
    window.appInitialized = true;
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  // The specification's restrictive default, for a resource that declares no origin.
  const csp = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
    "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";
  iframe.srcdoc = html.replace("<head>", '<head><meta http-equiv="Content-Security-Policy" content="' + csp + '">');
};
window.hostReady = true;
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
      if (!target.startsWith(url) && !target.startsWith("about:") && !target.startsWith("data:")) external.push(target);
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
    await page.evaluate((html, args, result) => window.startApp(html, args, result), resource.text, toolArguments, staged);
    await page.waitForFunction(() => window.appInitialized === true, { timeout: 15000 });
    const frame = await (await page.waitForSelector("iframe#app")).contentFrame();
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
