"""The official Python MCP SDK as a client of kts-mcp, over stdio or HTTP.

    client.py check --server KTS_MCP --query KTS_QUERY DIR [--http URL --token T]
        the tools, prompts and resources of DIR (a scope or a knowledge root),
        each answer compared with kts-query's; bad input answered with errors.
    client.py load --http URL --token T --clients N --searches M [--raw] QUESTION...
        N clients searching M times each at once; prints a JSON summary.
        With --raw, each client speaks JSON-RPC over plain HTTP POSTs instead
        of through the SDK: the server's latency without the SDK's own work.

Exits non-zero, with the reason, on the first check that fails.
"""

import argparse
import json
import subprocess
import sys
import time
from contextlib import asynccontextmanager

import anyio
import httpx2
import mcp.types as types
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

QUESTIONS = [
    "how do I fix a corrupt file",
    "what is a kts.chunk/1 record",
    "how long are documents retained",
    "what does error bad-json mean",
    "which stage splits documents into chunks",
]


@asynccontextmanager
async def session(args):
    """A ready session with the server: spawned over stdio, or at --http."""
    if args.http:
        headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            async with streamable_http_client(args.http, http_client=http) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    yield s
    else:
        params = StdioServerParameters(command=args.server, args=[args.dir, "--quiet"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=120.0) as s:
                await s.initialize()
                yield s


def kts_query(args, questions):
    """kts-query DIR --batch on the questions: {question: [chunk ids]}."""
    lines = "".join(json.dumps({"id": str(i), "text": q}) + "\n" for i, q in enumerate(questions))
    done = subprocess.run([args.query, args.dir, "--batch"], input=lines, capture_output=True,
                          text=True, check=True)
    found = {q: [] for q in questions}
    for line in done.stdout.splitlines():
        hit = json.loads(line)
        found[questions[int(hit["query_id"])]].append((hit["scope"], hit["chunk_id"]))
    return found


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


async def call(s, tool, arguments):
    result = await s.call_tool(tool, arguments)
    expect(not result.is_error, f"{tool} {arguments} failed: {text_of(result)}")
    return result


def text_of(result):
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def check(args):
    async with session(args) as s:
        tools = {t.name for t in (await s.list_tools()).tools}
        expect(tools == {"search", "context", "get_document", "list_scopes", "count_by_scope",
                         "related", "check_answer"}, f"tools: {tools}")

        scopes = (await call(s, "list_scopes", {})).structured_content["scopes"]
        slugs = [row["slug"] for row in scopes]
        expect(slugs, "list_scopes lists no scope")

        # search equals kts-query, hit for hit; each hit's text is the document's at its offsets.
        expected = kts_query(args, QUESTIONS)
        for question in QUESTIONS:
            found = (await call(s, "search", {"question": question})).structured_content
            hits = found["hits"]
            expect([(h["scope"], h["chunk_id"]) for h in hits] == expected[question],
                   f"search {question!r}: {[(h['scope'], h['chunk_id']) for h in hits]} "
                   f"but kts-query: {expected[question]}")
            expect(hits, f"no hit for {question!r}")
            for hit in hits[:3]:
                doc = (await call(s, "get_document", {"path": hit["path"], "scope": hit["scope"],
                                                      "start": hit["start"], "end": hit["end"]}))
                expect(doc.structured_content["markdown"] == hit["text"],
                       f"get_document {hit['path']} {hit['start']}..{hit['end']} is not the hit's text")
        top = (await call(s, "search", {"question": QUESTIONS[0], "top_k": 2, "mode": "bm25"}))
        expect(len(top.structured_content["hits"]) <= 2, "top_k is not kept")

        # Prompts: one per scope, and ask; each carries that scope's context.
        prompts = {p.name for p in (await s.list_prompts()).prompts}
        expect(prompts == set(slugs) | {"ask"}, f"prompts {prompts}, scopes {slugs}")
        for slug in slugs + ["ask"]:
            prompt = await s.get_prompt(slug, {"question": QUESTIONS[1]})
            message = prompt.messages[0].content.text
            expect("Question: " + QUESTIONS[1] in message, f"prompt {slug}: no question")
            if slug != "ask":
                paths = [h["path"] for h in (await call(s, "search", {
                    "question": QUESTIONS[1], "scope": slug})).structured_content["hits"]]
                expect(not paths or any(p in message for p in paths),
                       f"prompt {slug} cites none of its scope's hits {paths}")

        # Resources: every document, page after page; each reads as get_document does.
        resources, cursor = [], None
        while True:
            page = await s.list_resources(params=types.PaginatedRequestParams(cursor=cursor))
            resources += page.resources
            cursor = page.next_cursor
            if not cursor:
                break
        documents = sum(row["documents"] for row in scopes)
        expect(len(resources) == documents, f"{len(resources)} resources, {documents} documents")
        first = resources[0]
        content = (await s.read_resource(first.uri)).contents[0].text
        scope, path = str(first.uri).removeprefix("kts://").split("/", 1)
        whole = (await call(s, "get_document", {"path": first.name, "scope": scope}))
        expect(whole.structured_content["markdown"] == content, f"{first.uri} differs from get_document")

        for tool, arguments in [("context", {"question": QUESTIONS[0]}),
                                ("count_by_scope", {"question": "index"}),
                                ("check_answer", {"answer": "kts-index writes the index.",
                                                  "question": "what does kts-index do",
                                                  "scope": slugs[0]})]:
            await call(s, tool, arguments)

        await bad_input(s, slugs)
    print("check: every tool, prompt and resource answered as kts-query does")


async def bad_input(s, slugs):
    """Each bad call gets a clear error, and the next call still succeeds."""
    cases = [
        ({}, "question is required"),
        ({"question": 42}, "must be a string"),
        ({"question": "x", "top_k": "ten"}, "top_k must be an integer"),
        ({"question": "x", "top_k": 1000}, "from 1 to 100"),
        ({"question": "x", "scope": "no-such-scope"}, "no-such-scope"),
        ({"question": "word " * 20000}, "bytes long"),
        ({"question": '"*^:()-'}, "no words"),
        ({"question": "x", "bogus": True}, "no argument \"bogus\""),
    ]
    for arguments, message in cases:
        result = await s.call_tool("search", arguments)
        expect(result.is_error, f"search {str(arguments)[:60]} did not fail")
        expect(message in text_of(result), f"search {str(arguments)[:60]}: {text_of(result)!r}")
        await call(s, "search", {"question": "corrupt file"})
    # FTS syntax inside a question is only text.
    syntax = await call(s, "search", {"question": 'NEAR("corrupt" OR file*) AND ^error: -x'})
    expect(isinstance(syntax.structured_content["hits"], list), "FTS syntax broke search")
    missing = await s.call_tool("get_document", {"path": "/etc/passwd", "scope": slugs[0]})
    expect(missing.is_error and "no document" in text_of(missing), text_of(missing))
    try:
        await s.call_tool("no_such_tool", {})
        raise AssertionError("an unknown tool was answered")
    except MCPError as error:
        expect("no tool" in error.message, error.message)
    try:
        await s.get_prompt("no_such_scope", {"question": "x"})
        raise AssertionError("an unknown prompt was answered")
    except MCPError as error:
        expect("no prompt" in error.message, error.message)
    await call(s, "search", {"question": "corrupt file"})


async def unauthorised(args):
    """Without the token, the server answers nothing."""
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            async with streamable_http_client(args.http, http_client=http) as (read, write):
                async with ClientSession(read, write) as s:
                    with anyio.fail_after(30):
                        await s.initialize()
        raise AssertionError("a client without the token was served")
    except AssertionError:
        raise
    except BaseException:
        print("unauthorised: refused")


class RawSession:
    """Streamable HTTP spoken by hand: one POST per JSON-RPC message."""

    def __init__(self, http, url):
        self.http, self.url, self.next_id = http, url, 0
        self.headers = {"Accept": "application/json, text/event-stream",
                        "Content-Type": "application/json"}

    async def post(self, method, params=None, notify=False):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        response = await self.http.post(self.url, headers=self.headers, json=message)
        response.raise_for_status()
        if notify:
            return None
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for line in response.text.splitlines():
                if line.startswith("data:") and line[5:].strip():
                    reply = json.loads(line[5:])
                    if reply.get("id") == message["id"]:
                        break
            else:
                raise AssertionError(f"no reply to {method} in the event stream")
        else:
            reply = response.json()
        if "mcp-session-id" not in self.headers and response.headers.get("mcp-session-id"):
            self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        return reply

    async def initialize(self):
        # The last version with an initialize handshake, as the SDK's own fallback.
        await self.post("initialize", {"protocolVersion": "2025-11-25",
                                       "capabilities": {},
                                       "clientInfo": {"name": "raw", "version": "1"}})
        await self.post("notifications/initialized", notify=True)

    async def search(self, question):
        reply = await self.post("tools/call", {"name": "search",
                                               "arguments": {"question": question}})
        result = reply.get("result") or {}
        return result.get("isError", False), result.get("structuredContent") or {}, str(reply)


@asynccontextmanager
async def searcher(args):
    """A session with a `search(question)` → (is_error, structured, text) call."""
    if args.raw:
        headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            raw = RawSession(http, args.http)
            await raw.initialize()
            yield raw.search
    else:
        async with session(args) as s:
            async def search(question):
                result = await s.call_tool("search", {"question": question})
                return result.is_error, result.structured_content or {}, text_of(result)
            yield search


async def load(args):
    """N clients, each searching M times, all at once."""
    failures, latencies = [], []

    async def client(number):
        async with searcher(args) as search:
            for i in range(args.searches):
                question = args.questions[(number + i) % len(args.questions)]
                started = time.perf_counter()
                is_error, structured, text = await search(question)
                latencies.append(time.perf_counter() - started)
                hits = structured.get("hits")
                if is_error or not hits or any("text" not in h for h in hits):
                    failures.append(f"client {number} search {i}: {text[:200]}")

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for number in range(args.clients):
            group.start_soon(client, number)
    seconds = time.perf_counter() - started
    latencies.sort()
    print(json.dumps({
        "requests": len(latencies), "failures": failures, "seconds": round(seconds, 3),
        "queries_per_second": round(len(latencies) / seconds, 1),
        "p50_ms": round(1e3 * latencies[len(latencies) // 2], 1),
        "p95_ms": round(1e3 * latencies[int(len(latencies) * 0.95)], 1),
    }))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--server")
    c.add_argument("--query", required=True)
    c.add_argument("--http")
    c.add_argument("--token")
    u = sub.add_parser("unauthorised")
    u.add_argument("--http", required=True)
    lo = sub.add_parser("load")
    lo.add_argument("--http", required=True)
    lo.add_argument("--token")
    lo.add_argument("--clients", type=int, default=16)
    lo.add_argument("--searches", type=int, default=50)
    lo.add_argument("--raw", action="store_true")
    lo.add_argument("questions", nargs="+")
    args = parser.parse_args()
    run = {"check": check, "unauthorised": unauthorised, "load": load}[args.command]
    anyio.run(run, args)


if __name__ == "__main__":
    sys.exit(main())
