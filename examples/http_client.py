#!/usr/bin/env python3
"""GDIDs for a service in another language: `gdid serve` over HTTP.

Python's standard library only (urllib.request and json): any language with an
HTTP client and a JSON parser does the same. Start a server, then run this:

    gdid token --scopes shop     # line 1: the token; line 2: its tokens line
    gdid serve --store sqlite:ids.sqlite --listen 127.0.0.1:7070 \\
        --tokens tokens.txt      # tokens.txt holds that line 2
    GDID_URL=http://127.0.0.1:7070 GDID_TOKEN=... python3 http_client.py

It checks everything it gets back (ids parse, increase, carry the server's
authority) and exits with status 1 and a message on stderr otherwise, so CI
(scripts/test) runs it as a test.
"""

import json
import os
import re
import sys
import urllib.error
import urllib.request

SCOPE = "shop"  # the token must be allowed this scope (`--scopes shop`)
SEQUENCE = "orders"
COUNTER_BITS = 60  # a GDID is era (32 bits), authority (4), counter (60)
TEXT_ID = re.compile(r"([0-9]+):([0-9]+):([0-9]+)")  # era:authority:counter
HEX_ID = re.compile(r"[0-9a-f]{24}")  # the 12 bytes, lower-case

# Where the server is (the URL `gdid serve` prints) and the client's token.
GDID_URL = os.environ.get("GDID_URL", "").rstrip("/")
GDID_TOKEN = os.environ.get("GDID_TOKEN", "")


def fail(message):
    """Stops the example: exit status 1, the message on stderr."""
    sys.exit(f"http_client.py: {message}")


def call(method, path, token, body=None):
    """One request; returns the HTTP status and the JSON reply.

    Errors come back too (as {"error": {"code", "message"}}): only an
    unreachable server stops the example here.
    """
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(
        GDID_URL + path, data=data, headers=headers, method=method
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            status, raw = reply.status, reply.read()
    except urllib.error.HTTPError as error:  # a 4xx or 5xx: read its body
        status, raw = error.code, error.read()
    except (urllib.error.URLError, OSError) as error:
        fail(f"cannot reach {GDID_URL}{path}: {error}")
    try:
        return status, json.loads(raw)
    except ValueError:
        fail(f"{method} {path}: {status}, and a body that is not JSON: "
             f"{raw!r}")


def ok(method, path, body=None):
    """A request that must succeed (200): its JSON reply."""
    status, reply = call(method, path, GDID_TOKEN, body)
    if status != 200:
        error = reply.get("error", {})
        fail(f"{method} {path}: {status} {error.get('code')}: "
             f"{error.get('message')}")
    return reply


def parse_text(text):
    """`era:authority:counter` (the text form) as a tuple of ints."""
    match = TEXT_ID.fullmatch(text)
    if not match:
        fail(f"{text!r} is not an id in text form (era:authority:counter)")
    era, authority, counter = (int(part) for part in match.groups())
    if era >= 1 << 32 or authority >= 16 or counter >= 1 << COUNTER_BITS:
        fail(f"{text!r} is out of range: era, authority or counter too large")
    return era, authority, counter


def parse_hex(digits):
    """24 hex digits (the 12 big-endian bytes) as (era, authority, counter).

    Byte order is id order: in a BINARY(12) column, or compared as hex text,
    ids sort in the order they were issued.
    """
    if not HEX_ID.fullmatch(digits):
        fail(f"{digits!r} is not an id in hex form (24 hex digits)")
    era, rest = int(digits[:8], 16), int(digits[8:], 16)
    return era, rest >> COUNTER_BITS, rest & ((1 << COUNTER_BITS) - 1)


def get_ids(count, form, parse, authority):
    """`count` ids in `form`, checked: parsed, ours, strictly increasing."""
    reply = ok("POST", "/v1/ids",
               {"scope": SCOPE, "sequence": SEQUENCE, "count": count,
                "form": form})
    ids = reply["ids"]
    if reply["form"] != form or len(ids) != count:
        fail(f"asked for {count} ids in {form} form, got {reply}")
    parsed = [parse(spelled) for spelled in ids]
    for spelled, (_, id_authority, _) in zip(ids, parsed):
        if id_authority != authority:
            fail(f"id {spelled} is not of the server's authority {authority}")
    for before, after in zip(parsed, parsed[1:]):
        if after <= before:
            fail(f"ids do not increase: {ids}")
    print(f"{count} ids as {form}: {' '.join(ids)}")
    return parsed


def main():
    """The steps a service takes, each checked."""
    if not GDID_URL or not GDID_TOKEN:
        fail("set GDID_URL (printed by `gdid serve`) and GDID_TOKEN "
             "(line 1 of `gdid token`)")

    # Health needs no token: whether the process answers (for a load balancer).
    status, health = call("GET", "/v1/health", token=None)
    if status != 200 or health.get("status") != "ok":
        fail(f"GET /v1/health: {status} {health}")
    print(f"health: {health['status']}")

    # Which authority this server is (0 to 15): every id it issues carries it.
    info = ok("GET", "/v1/authority")
    authority = info["authority"]
    print(f"authority: {authority} (blocks of up to {info['max_block']}, "
          f"up to {info['max_count']} ids a request)")

    # Ids from the server's own generator, ready to use: the simplest way.
    texts = get_ids(5, "text", parse_text, authority)
    hexes = get_ids(3, "hex", parse_hex, authority)
    if len(set(texts + hexes)) != len(texts) + len(hexes):
        fail("an id was issued twice")

    # A block: 100 counters reserved for this caller alone, persisted before
    # the reply. A service that needs many ids allocates blocks and counts
    # through them itself: one request per block rather than one per id.
    block = ok("POST", "/v1/blocks",
               {"scope": SCOPE, "sequence": SEQUENCE, "size": 100})
    era, start, length = block["era"], block["start"], block["len"]
    if block["authority"] != authority or length != 100:
        fail(f"asked for a block of 100 of authority {authority}, got {block}")
    first, last = start, start + length - 1
    if any(e == era and first <= c <= last for e, _, c in texts + hexes):
        fail(f"the block {block} holds ids already issued")
    print(f"block of {length}: {era}:{authority}:{first} .. "
          f"{era}:{authority}:{last}")

    # A token the server does not list: 401, and the reason as JSON.
    status, refused = call("POST", "/v1/ids", "not-" + GDID_TOKEN,
                           {"scope": SCOPE, "sequence": SEQUENCE, "count": 1})
    code = refused.get("error", {}).get("code")
    if status != 401 or code != "unauthorized":
        fail(f"a wrong token got {status} {refused}, not 401 unauthorized")
    print(f"wrong token: {status} {code} ({refused['error']['message']})")


if __name__ == "__main__":
    try:
        main()
    except (KeyError, TypeError, AttributeError) as error:
        fail(f"a reply is not shaped as the API says: {error!r}")
