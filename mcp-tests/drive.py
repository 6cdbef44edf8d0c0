"""Drives `stead mcp` with the official MCP Python SDK, one scenario per call:

    python drive.py SCENARIO STEAD_BIN STATE_DIR [WORK_DIR]

Each scenario asserts as it goes and exits non-zero (with the traceback) on the first
thing that is not as it should be; `ok SCENARIO` on stdout means every check passed. The
state directory's timings come from the environment, passed through to `stead mcp` and
to the `stead` commands a scenario runs beside it to compare answers.

Run by crates/stead/tests/e2e/mcp.rs, which owns the state directory and stops every
process in it when the test ends.
"""

import asyncio
import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager

from mcp import Client, StdioServerParameters

SCENARIO, STEAD, STATE = sys.argv[1], sys.argv[2], sys.argv[3]
WORK = sys.argv[4] if len(sys.argv) > 4 else STATE

WRITE_TOOLS = {
    "job_put",
    "job_remove",
    "job_enable",
    "run_now",
    "run_cancel",
    "hold_acquire",
    "hold_release",
    "restart",
}
READ_TOOLS = {
    "status",
    "job_list",
    "job_show",
    "runs_list",
    "run_show",
    "checkpoints",
    "run_wait",
    "run_log",
    "service_list",
    "readiness",
    "gate",
    "hold_list",
    "sleep_list",
}
DESTRUCTIVE = {"job_remove", "run_cancel", "restart"}


@asynccontextmanager
async def stead_mcp(*extra):
    params = StdioServerParameters(
        command=STEAD,
        args=["--state-dir", STATE, "mcp", *extra],
        env=dict(os.environ),
    )
    async with Client(params, raise_exceptions=True, read_timeout_seconds=120) as client:
        yield client


def cli(*args):
    """`stead --state-dir STATE ARGS... --json`, parsed; it must succeed."""
    out = subprocess.run(
        [STEAD, "--state-dir", STATE, *args, "--json"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert out.returncode == 0, f"stead {' '.join(args)}: {out.returncode} {out.stderr}"
    return json.loads(out.stdout)


def text_of(result):
    assert result.content, result
    return result.content[0].text


def ok(result):
    """The JSON a successful call answered (its text, checked against its structure)."""
    assert not result.is_error, f"tool error: {text_of(result)}"
    value = json.loads(text_of(result))
    structured = result.structured_content
    if isinstance(value, dict):
        assert structured == value, (structured, value)
    else:
        # A list travels as the text, and as an object of one field in structure.
        assert list(structured.values()) == [value], (structured, value)
    return value


def refused(result, *words):
    """The text of a tool error, which must name every one of `words`."""
    assert result.is_error, f"expected a tool error, got {text_of(result)}"
    text = text_of(result)
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"
    return text


async def tools():
    async with stead_mcp() as client:
        assert client.server_info.name == "stead", client.server_info
        caps = client.server_capabilities
        assert caps.tools is not None and caps.resources is not None, caps
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == WRITE_TOOLS | READ_TOOLS, sorted(listed)
        for name, tool in listed.items():
            schema = tool.input_schema
            assert schema["type"] == "object", (name, schema)
            assert tool.description, name
            a = tool.annotations
            assert a is not None and a.title, name
            assert a.read_only_hint is (name in READ_TOOLS), (name, a)
            if name in WRITE_TOOLS:
                assert a.destructive_hint is (name in DESTRUCTIVE), (name, a)
            # A misspelt argument is an error, not silently dropped.
            assert schema.get("additionalProperties") is False or not schema.get(
                "properties"
            ), (name, schema)
        put = listed["job_put"].input_schema
        assert put["required"] == ["job"], put
        job = put["properties"]["job"]
        if "$ref" in job:
            job = put["$defs"][job["$ref"].rsplit("/", 1)[1]]
        assert {"name", "command"} <= set(job["required"]), job
        assert {"cron", "every", "tz", "timeout", "retries"} <= set(job["properties"]), job
        assert set(listed["run_log"].input_schema["required"]) == {"id"}
        assert set(listed["gate"].input_schema["properties"]) == {"service", "timeout", "window"}

        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert {"stead://docs/job-fields", "stead://docs/scheduling"} <= set(resources)
        fields = (await client.read_resource("stead://docs/job-fields")).contents[0].text
        assert "| `cron` |" in fields and "| `command` |" in fields, fields
        cron = (await client.read_resource("stead://docs/scheduling")).contents[0].text
        assert "## Cron expressions" in cron


async def jobs():
    out = os.path.join(WORK, "out")
    async with stead_mcp() as client:
        put = ok(
            await client.call_tool(
                "job_put",
                {
                    "job": {
                        "name": "greet",
                        "command": ['printf "hello %s %s\\n" "$WHO" "$1"; echo done'],
                        "shell": True,
                    }
                },
            )
        )
        assert put["created"] == ["greet"], put
        again = ok(
            await client.call_tool(
                "job_put",
                {"job": {"name": "greet", "command": ["true"]}, "dry_run": True},
            )
        )
        assert again["changed"][0]["name"] == "greet" and again["dry_run"], again
        job = ok(await client.call_tool("job_show", {"name": "greet"}))
        assert job == cli("job", "show", "greet"), job
        assert job["shell"] is True, job

        run = ok(
            await client.call_tool(
                "run_now",
                {"job": "greet", "env": {"WHO": "agent"}, "args": ["twice"], "wait": True},
            )
        )
        assert run["status"] == "succeeded" and run["exit_code"] == 0, run
        # The same JSON the CLI prints for the same run.
        assert run == cli("show", str(run["id"])), run

        log = ok(await client.call_tool("run_log", {"id": run["id"]}))
        assert log["text"] == "hello agent twice\ndone\n", log
        assert log["complete"] and log["next_offset"] == log["size"] == len(log["text"]), log
        # Read on from an offset, a few bytes at a time.
        part = ok(await client.call_tool("run_log", {"id": run["id"], "offset": 6, "max_bytes": 5}))
        assert part["text"] == "agent" and part["next_offset"] == 11 and not part["complete"], part

        # A run without checkpoints: its key holds nothing, as the CLI says.
        held = ok(await client.call_tool("checkpoints", {"id": run["id"]}))
        assert held["run_id"] == run["id"] and held["checkpoints"] == held["steps"] == [], held
        assert held == cli("checkpoint", "ls", "--run", str(run["id"])), held

        listed = ok(await client.call_tool("runs_list", {"job": "greet", "status": "succeeded"}))
        assert [r["id"] for r in listed] == [run["id"]], listed
        assert listed == cli("runs", "--job", "greet", "--status", "succeeded"), listed
        jobs = ok(await client.call_tool("job_list", {}))
        assert [j["name"] for j in jobs] == ["greet"], jobs

        # A run answered before it ends, then waited for; and a cancel.
        ok(
            await client.call_tool(
                "job_put",
                {"job": {"name": "slow", "command": ["sh", "-c", f"touch {out}; sleep 60"]}},
            )
        )
        slow = ok(await client.call_tool("run_now", {"job": "slow"}))
        assert slow["status"] in ("queued", "running"), slow
        waited = ok(await client.call_tool("run_wait", {"id": slow["id"], "timeout": "1s"}))
        assert waited["status"] in ("queued", "running"), waited
        cancelled = ok(await client.call_tool("run_cancel", {"id": slow["id"]}))
        assert cancelled["id"] == slow["id"], cancelled
        ended = ok(await client.call_tool("run_wait", {"id": slow["id"], "timeout": "30s"}))
        assert ended["status"] == "cancelled", ended

        gone = ok(await client.call_tool("job_remove", {"name": "slow"}))
        assert gone["name"] == "slow", gone
        assert [j["name"] for j in cli("job", "ls")] == ["greet"]


async def gate():
    marker = os.path.join(WORK, "restarted")
    async with stead_mcp() as client:
        hold = ok(
            await client.call_tool("hold_acquire", {"name": "agent-1", "service": "web", "ttl": "10m"})
        )
        assert hold["service"] == "web" and not hold["wedged"], hold
        ready = ok(await client.call_tool("readiness", {"service": "web"}))
        assert not ready["ready"] and ready["blockers"][0]["name"] == "agent-1", ready

        # A client that asks for progress hears, each second, that the gate still waits.
        heard = []

        async def progress(progress, total, message):
            heard.append((progress, message))

        deferred = ok(
            await client.call_tool(
                "gate", {"service": "web", "timeout": "3s"}, progress_callback=progress
            )
        )
        assert deferred["outcome"] == "deferred", deferred
        assert heard and heard[0][1].startswith("gate: waited"), heard
        assert deferred["readiness"]["blockers"][0]["kind"] == "hold", deferred
        # A restart through the gate defers too, and restarts nothing.
        held = ok(await client.call_tool("restart", {"service": "web", "timeout": "1s"}))
        assert held["restarted"] is False, held
        assert not os.path.exists(marker), "the restart command ran while the hold was live"

        released = ok(await client.call_tool("hold_release", {"name": "agent-1"}))
        assert released["name"] == "agent-1", released
        clear = ok(await client.call_tool("gate", {"service": "web", "timeout": "30s"}))
        assert clear["outcome"] == "clear" and clear["readiness"]["ready"], clear

        done = ok(await client.call_tool("restart", {"service": "web", "timeout": "30s"}))
        assert done["restarted"] is True, done
        assert [p["name"] for p in done["phases"]] == ["gate", "restart", "ready"], done
        assert os.path.exists(marker), "the restart command did not run"

        # stead itself, through the gate: a new server answers afterwards.
        before = ok(await client.call_tool("status", {}))
        again = ok(await client.call_tool("restart", {"timeout": "30s"}))
        assert again["restarted"] is True, again
        assert again["old_server_id"] == before["server_id"], (before, again)
        after = ok(await client.call_tool("status", {}))
        assert after["server_id"] == again["new_server_id"] != before["server_id"], after


async def bad():
    async with stead_mcp() as client:
        typo = await client.call_tool(
            "job_put", {"job": {"name": "oops", "command": ["true"], "shedule": "* * * * *"}}
        )
        refused(typo, "shedule")
        cron = refused(
            await client.call_tool(
                "job_put", {"job": {"name": "oops", "command": ["true"], "cron": "61 * * * *"}}
            ),
            "61",
        )
        # The text `stead apply` gives for the same job in a file.
        path = os.path.join(WORK, "oops.toml")
        with open(path, "w") as f:
            f.write('[[job]]\nname = "oops"\ncommand = ["true"]\ncron = "61 * * * *"\n')
        applied = subprocess.run(
            [STEAD, "--state-dir", STATE, "apply", path],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        assert applied.returncode == 65, applied
        assert applied.stderr.strip() == f"stead: {cron}", (applied.stderr, cron)

        refused(await client.call_tool("job_put", {"job": {"name": "oops"}}), "command")
        refused(await client.call_tool("run_now", {"job": "nothing"}), "nothing")
        refused(await client.call_tool("run_now", {"job": "nothing", "colour": "red"}), "colour")
        refused(await client.call_tool("run_show", {"id": "seven"}), "id")
        refused(await client.call_tool("run_log", {"id": 1, "max_bytes": 0}), "max_bytes")
        refused(await client.call_tool("gate", {"timeout": "11m"}), "timeout")
        refused(await client.call_tool("gate", {"timeout": "soon"}), "soon")
        refused(await client.call_tool("hold_acquire", {"name": "h", "ttl": "forever"}), "forever")
        # Nothing was changed by any of it.
        assert cli("job", "ls") == [], cli("job", "ls")
        assert cli("hold", "ls") == [], cli("hold", "ls")
        assert cli("runs") == [], cli("runs")


async def read_only():
    async with stead_mcp("--read-only") as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert listed == READ_TOOLS, sorted(listed)
        no = await client.call_tool("job_put", {"job": {"name": "sneaky", "command": ["true"]}})
        refused(no, "read-only", "nothing was done")
        refused(await client.call_tool("hold_acquire", {"name": "h", "ttl": "1m"}), "read-only")
        refused(await client.call_tool("restart", {}), "read-only")
        assert ok(await client.call_tool("job_list", {})) == []
        assert ok(await client.call_tool("gate", {"timeout": "5s"}))["outcome"] == "clear"
    assert cli("job", "ls") == [] and cli("hold", "ls") == []


SCENARIOS = {f.__name__: f for f in (tools, jobs, gate, bad, read_only)}

if __name__ == "__main__":
    asyncio.run(SCENARIOS[SCENARIO]())
    print(f"ok {SCENARIO}")
