#!/usr/bin/env node
// GDIDs for a service in another language: `gdid serve` over HTTP, from Node.js.
//
// Node.js 20's standard library only (the global `fetch`): no package to install. The same steps
// as http_client.py beside it. Start a server, then run this:
//
//     gdid token --scopes shop     # line 1: the token; line 2: its tokens line
//     gdid serve --store sqlite:ids.sqlite --listen 127.0.0.1:7070 \
//         --tokens tokens.txt      # tokens.txt holds that line 2
//     GDID_URL=http://127.0.0.1:7070 GDID_TOKEN=... node http_client.mjs
//
// It checks everything it gets back (ids parse, increase, carry the server's authority) and exits
// with status 1 and a message on stderr otherwise, so CI (scripts/test) runs it as a test.
//
// Ids are compared as BigInt: a counter has 60 bits, more than a JavaScript number holds exactly.
// For the same reason a reply's `start` (a block's first counter) is exact only below 2^53 when
// read with JSON.parse, as here: far beyond what a sequence reaches in practice.

const SCOPE = "shop"; // the token must be allowed this scope (`--scopes shop`)
const SEQUENCE = "orders";
const COUNTER_BITS = 60n; // a GDID is era (32 bits), authority (4), counter (60)
const TEXT_ID = /^([0-9]+):([0-9]+):([0-9]+)$/; // era:authority:counter
const HEX_ID = /^[0-9a-f]{24}$/; // the 12 bytes, lower-case

// Where the server is (the URL `gdid serve` prints) and the client's token.
const GDID_URL = (process.env.GDID_URL ?? "").replace(/\/+$/, "");
const GDID_TOKEN = process.env.GDID_TOKEN ?? "";

/** Stops the example: exit status 1, the message on stderr. */
function fail(message) {
  console.error(`http_client.mjs: ${message}`);
  process.exit(1);
}

/**
 * One request; returns the HTTP status and the JSON reply.
 *
 * Errors come back too (as {"error": {"code", "message"}}): only an unreachable server stops the
 * example here.
 */
async function call(method, path, token, body) {
  const headers = { Accept: "application/json" };
  if (token !== null) {
    headers.Authorization = `Bearer ${token}`;
  }
  const init = { method, headers, signal: AbortSignal.timeout(10_000) };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    headers["Content-Type"] = "application/json";
  }
  let reply;
  let raw;
  try {
    reply = await fetch(GDID_URL + path, init);
    raw = await reply.text();
  } catch (error) {
    fail(`cannot reach ${GDID_URL}${path}: ${error.cause?.message ?? error.message}`);
  }
  try {
    return { status: reply.status, json: JSON.parse(raw) };
  } catch {
    fail(`${method} ${path}: ${reply.status}, and a body that is not JSON: ${JSON.stringify(raw)}`);
  }
}

/** A request that must succeed (200): its JSON reply. */
async function ok(method, path, body) {
  const { status, json } = await call(method, path, GDID_TOKEN, body);
  if (status !== 200) {
    const error = json?.error ?? {};
    fail(`${method} ${path}: ${status} ${error.code}: ${error.message}`);
  }
  return json;
}

/** `era:authority:counter` (the text form) as [era, authority, counter], BigInts. */
function parseText(text) {
  const match = TEXT_ID.exec(text);
  if (!match) {
    fail(`${JSON.stringify(text)} is not an id in text form (era:authority:counter)`);
  }
  const [era, authority, counter] = match.slice(1).map(BigInt);
  if (era >= 1n << 32n || authority >= 16n || counter >= 1n << COUNTER_BITS) {
    fail(`${JSON.stringify(text)} is out of range: era, authority or counter too large`);
  }
  return [era, authority, counter];
}

/**
 * 24 hex digits (the 12 big-endian bytes) as [era, authority, counter], BigInts.
 *
 * Byte order is id order: in a BINARY(12) column, or compared as hex text, ids sort in the order
 * they were issued.
 */
function parseHex(digits) {
  if (!HEX_ID.test(digits)) {
    fail(`${JSON.stringify(digits)} is not an id in hex form (24 hex digits)`);
  }
  const era = BigInt(`0x${digits.slice(0, 8)}`);
  const rest = BigInt(`0x${digits.slice(8)}`);
  return [era, rest >> COUNTER_BITS, rest & ((1n << COUNTER_BITS) - 1n)];
}

/** Whether id `a` comes before id `b` (both [era, authority, counter]). */
function before(a, b) {
  for (let i = 0; i < 3; i++) {
    if (a[i] !== b[i]) {
      return a[i] < b[i];
    }
  }
  return false;
}

/** `count` ids in `form`, checked: parsed, ours, strictly increasing. */
async function getIds(count, form, parse, authority) {
  const reply = await ok("POST", "/v1/ids", { scope: SCOPE, sequence: SEQUENCE, count, form });
  const ids = reply.ids;
  if (reply.form !== form || !Array.isArray(ids) || ids.length !== count) {
    fail(`asked for ${count} ids in ${form} form, got ${JSON.stringify(reply)}`);
  }
  const parsed = ids.map(parse);
  parsed.forEach(([, idAuthority], i) => {
    if (idAuthority !== authority) {
      fail(`id ${ids[i]} is not of the server's authority ${authority}`);
    }
  });
  for (let i = 1; i < parsed.length; i++) {
    if (!before(parsed[i - 1], parsed[i])) {
      fail(`ids do not increase: ${ids.join(" ")}`);
    }
  }
  console.log(`${count} ids as ${form}: ${ids.join(" ")}`);
  return parsed;
}

/** The steps a service takes, each checked. */
async function main() {
  if (!GDID_URL || !GDID_TOKEN) {
    fail("set GDID_URL (printed by `gdid serve`) and GDID_TOKEN (line 1 of `gdid token`)");
  }

  // Health needs no token: whether the process answers (for a load balancer).
  const health = await call("GET", "/v1/health", null);
  if (health.status !== 200 || health.json?.status !== "ok") {
    fail(`GET /v1/health: ${health.status} ${JSON.stringify(health.json)}`);
  }
  console.log(`health: ${health.json.status}`);

  // Which authority this server is (0 to 15): every id it issues carries it.
  const info = await ok("GET", "/v1/authority");
  if (!Number.isInteger(info.authority)) {
    fail(`GET /v1/authority: no authority number in ${JSON.stringify(info)}`);
  }
  const authority = BigInt(info.authority);
  console.log(
    `authority: ${authority} (blocks of up to ${info.max_block}, ` +
      `up to ${info.max_count} ids a request)`,
  );

  // Ids from the server's own generator, ready to use: the simplest way.
  const texts = await getIds(5, "text", parseText, authority);
  const hexes = await getIds(3, "hex", parseHex, authority);
  const all = [...texts, ...hexes];
  if (new Set(all.map((id) => id.join(":"))).size !== all.length) {
    fail("an id was issued twice");
  }

  // A block: 100 counters reserved for this caller alone, persisted before the reply. A service
  // that needs many ids allocates blocks and counts through them itself: one request per block
  // rather than one per id.
  const block = await ok("POST", "/v1/blocks", { scope: SCOPE, sequence: SEQUENCE, size: 100 });
  if (BigInt(block.authority) !== authority || block.len !== 100) {
    fail(`asked for a block of 100 of authority ${authority}, got ${JSON.stringify(block)}`);
  }
  const era = BigInt(block.era);
  const first = BigInt(block.start);
  const last = first + BigInt(block.len) - 1n;
  if (all.some(([e, , c]) => e === era && first <= c && c <= last)) {
    fail(`the block ${JSON.stringify(block)} holds ids already issued`);
  }
  console.log(`block of ${block.len}: ${era}:${authority}:${first} .. ${era}:${authority}:${last}`);

  // A token the server does not list: 401, and the reason as JSON.
  const refused = await call("POST", "/v1/ids", `not-${GDID_TOKEN}`, {
    scope: SCOPE,
    sequence: SEQUENCE,
    count: 1,
  });
  const code = refused.json?.error?.code;
  if (refused.status !== 401 || code !== "unauthorized") {
    fail(`a wrong token got ${refused.status} ${JSON.stringify(refused.json)}, not 401 unauthorized`);
  }
  console.log(`wrong token: ${refused.status} ${code} (${refused.json.error.message})`);
}

main().catch((error) => fail(`a reply is not shaped as the API says: ${error}`));
