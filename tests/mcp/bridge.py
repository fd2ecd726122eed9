"""A real MCP client between the integration test and `arkdiff mcp`.

Usage: python3 bridge.py ARKDIFF [ARG...]

Starts `ARKDIFF mcp ARG...` with the official Python SDK's stdio client, initializes the
session, and then serves the test one request per line on stdin, one answer per line on
stdout (JSON both ways), over that one session:

    {"list_tools": true}
        -> {"tools": [{"name": ..., "description": ..., "input_schema": ...,
                       "annotations": {"read_only_hint": ..., ...}}, ...],
            "server": {"name": ..., "version": ...}, "instructions": ...}
    {"tool": NAME, "arguments": {...}, "progress": true}
        -> {"is_error": bool, "structured": ... or null, "text": [...],
            "progress": [{"progress": ..., "message": ...}, ...]}

A request the SDK refuses (a protocol error) answers {"protocol_error": MESSAGE}. The
server's stderr goes to this process's stderr. End of stdin closes the session, which
ends the server; this process then exits 0.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def reply(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


async def main(argv):
    server = StdioServerParameters(command=argv[1], args=["mcp", *argv[2:]])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            stdin = anyio.wrap_file(sys.stdin)
            async for line in stdin:
                if not line.strip():
                    continue
                request = json.loads(line)
                try:
                    if request.get("list_tools"):
                        listed = await session.list_tools()
                        reply(
                            {
                                "tools": [
                                    {
                                        "name": t.name,
                                        "description": t.description,
                                        "input_schema": t.input_schema,
                                        "annotations": (
                                            t.annotations.model_dump(exclude_none=True)
                                            if t.annotations
                                            else None
                                        ),
                                    }
                                    for t in listed.tools
                                ],
                                "server": {
                                    "name": init.server_info.name,
                                    "version": init.server_info.version,
                                },
                                "instructions": init.instructions,
                            }
                        )
                        continue
                    progress = []

                    async def on_progress(done, total, message):
                        progress.append({"progress": done, "message": message})

                    result = await session.call_tool(
                        request["tool"],
                        request.get("arguments", {}),
                        progress_callback=on_progress if request.get("progress") else None,
                    )
                    reply(
                        {
                            "is_error": bool(result.is_error),
                            "structured": result.structured_content,
                            "text": [c.text for c in result.content if c.type == "text"],
                            "progress": progress,
                        }
                    )
                except Exception as e:  # the SDK's refusal, for the test to see
                    reply({"protocol_error": f"{type(e).__name__}: {e}"})


if __name__ == "__main__":
    anyio.run(main, sys.argv)
