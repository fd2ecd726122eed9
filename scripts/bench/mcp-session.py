"""Times an MCP session with `arkdiff mcp`: one `open`, then follow-up questions.

    python3 scripts/bench/mcp-session.py ARKDIFF BASE HEAD [MORE...]

Needs the official MCP SDK (pip install mcp; `.ci/run` puts one in target/mcp-client).
Starts `ARKDIFF mcp` under /usr/bin/time (for the server's peak RSS), opens the inputs,
asks `classes`, `object` about the largest classes' path ends and their references,
`path` by class, `gate`, and `open` again (which must reuse the comparison), and prints
the wall time of each call as the client saw it. Timings depend on the machine and its
load: say which when quoting them.
"""

import json
import sys
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(argv):
    arkdiff, inputs = argv[1], argv[2:]
    server = StdioServerParameters(
        command="/usr/bin/time",
        args=["-f", "server: %e s wall, peak RSS %M KB", arkdiff, "mcp"],
    )
    rows = []

    async def timed(session, tool, arguments):
        started = time.perf_counter()
        result = await session.call_tool(tool, arguments)
        seconds = time.perf_counter() - started
        if result.is_error:
            raise SystemExit(f"{tool} {arguments}: {result.content[0].text}")
        rows.append((tool, json.dumps(arguments)[:70], seconds))
        return result.structured_content

    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            opened = await timed(session, "open", {"inputs": inputs})
            capture = opened["capture"]
            classes = await timed(
                session, "classes", {"capture": capture, "sort": "size_delta", "limit": 5}
            )
            for row in classes["rows"][:3]:
                path = await timed(session, "path", {"capture": capture, "class": row["name"]})
                if path.get("instance_id") is not None:
                    obj = await timed(
                        session, "object", {"capture": capture, "id": path["instance_id"]}
                    )
                    for ref in obj["referrers"]["rows"][:2]:
                        await timed(session, "object", {"capture": capture, "id": ref["id"]})
            await timed(
                session,
                "gate",
                {"capture": capture, "thresholds": {"heap": {"size": {"fail": "10MiB"}}}},
            )
            again = await timed(session, "open", {"inputs": inputs})
            assert again["reused"], again
            print(f"open: {opened['open_seconds']:.2f} s in the server, "
                  f"{opened['memory_bytes'] / 2**20:.0f} MiB kept (estimated)")
    for tool, arguments, seconds in rows:
        print(f"{seconds * 1000:10.1f} ms  {tool:8} {arguments}")


if __name__ == "__main__":
    anyio.run(main, sys.argv)
