"""DeerFlow's subagent loop, rebuilt with the public libraries DeerFlow runs on, for bench/turn-vs-deerflow.ts.

Our own few lines, not DeerFlow's code. What DeerFlow 2.1.0 (backend/packages/harness/deerflow/subagents/executor.py)
does for one subagent, and what this file does of it:

- Builds one agent per execution with LangChain's ``create_agent``: the chat model (``ChatOpenAI``, streamed,
  ``stream_usage`` on as DeerFlow's model factory sets it), the tools, a ThreadState-shaped state schema (the same
  channels and merge kinds), ``system_prompt=None`` with the prompt as the first state message,
  ``checkpointer=False``. Mirrored.
- Runs it with ``agent.astream(state, config={"recursion_limit": max_turns, "callbacks": [token collector], "tags":
  [...]}, stream_mode="values")`` and, on every chunk, copies the newly appended messages into its step record
  and logs a line. Mirrored (the collector reads each call's usage; the step record is a dict per message).
- Concurrency: ``execute_async`` hands each subagent to a 3-thread scheduler pool, whose thread submits the
  coroutine to one persistent event loop thread and waits for it. Mirrored: three subagents at once are three
  coroutines on that one loop.
- Middlewares: the subagent chain with DeerFlow's default config (tool_progress, guardrails, authorization,
  vision, MCP routing and extensions off), in DeerFlow's order and with the same hooks, so the graph has the same
  nodes per turn (before_model: durable context, summarization; after_model: loop detection, token budget,
  safety finish reason, durable context) and the same wrappers around each model and tool call. Summarization is
  LangChain's own ``SummarizationMiddleware`` with config.example.yaml's trigger (32000 tokens, never reached
  here). The others are stand-ins that do a little of what DeerFlow's do (scan the messages, hash the tool
  calls, add up usage, check the finish reason, truncate and sanitize tool output); DeerFlow's own bodies do
  more, so a turn here costs DeerFlow's loop at least this much.
- Tools: ``ls`` lists a folder two levels deep as DeerFlow's local sandbox does (a virtual
  ``/mnt/user-data/workspace`` path mapped to the real folder, the listing mapped back), its body run in a thread
  (``asyncio.to_thread``) after an async sandbox check, as DeerFlow's async tools are. ``bash``, ``read_file``,
  ``write_file`` and ``str_replace`` are offered with DeerFlow-shaped arguments (their schemas go out with every
  request) but are not called.
- Left out: DeerFlow's config loading, skills catalog, extension lifecycle notifications, tracing callbacks, the
  SSE bridge to a parent run, the task tool's 5-second polling of the result (all outside the per-turn path or
  off by default).

Protocol: one JSON line per request on stdin, ``{"tasks": [{"prompt": str, "workspace": str}], "max_turns": int}``;
the subagents run at once and one JSON line answers on stdout, ``{"results": [{"status", "steps", "error"}]}``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import platform
import sys
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, NotRequired

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import AgentMiddleware, SummarizationMiddleware
from langchain.tools import ToolRuntime
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

logger = logging.getLogger("deerflow-bench")

VIRTUAL_WORKSPACE = "/mnt/user-data/workspace"
TOOL_OUTPUT_BUDGET_CHARS = 20000
SYSTEM_PROMPT = (
    "You are a general-purpose subagent working on a delegated task. Use the tools you have, "
    "then answer with a short summary of what you found."
)


# ---- state: the channels of DeerFlow's ThreadState, with merges of the same kinds ----


def _keep_given(existing: Any, new: Any) -> Any:
    return existing if new is None else new


def _merge_unique(existing: list | None, new: list | None) -> list:
    return list(dict.fromkeys((existing or []) + (new or [])))


def _merge_dict(existing: dict | None, new: dict | None) -> dict:
    if new is None:
        return existing or {}
    return {} if len(new) == 0 else {**(existing or {}), **new}


def _append(existing: list | None, new: list | None) -> list:
    return (existing or []) + (new or [])


class BenchThreadState(AgentState):
    sandbox: Annotated[NotRequired[dict | None], _keep_given]
    thread_data: NotRequired[dict | None]
    title: NotRequired[str | None]
    artifacts: Annotated[list[str], _merge_unique]
    todos: Annotated[list | None, _keep_given]
    goal: Annotated[dict | None, _keep_given]
    uploaded_files: NotRequired[list[dict] | None]
    viewed_images: Annotated[dict, _merge_dict]
    promoted: Annotated[dict | None, _keep_given]
    delegations: Annotated[list, _append]
    skill_context: Annotated[list, _append]
    summary_text: NotRequired[str | None]
    background_tasks: NotRequired[list[dict]]


# ---- tools ----


def _real_path(path: str, workspace: str) -> Path:
    if path == VIRTUAL_WORKSPACE or path.startswith(VIRTUAL_WORKSPACE + "/"):
        path = workspace + path[len(VIRTUAL_WORKSPACE) :]
    real = Path(path).resolve()
    if not real.is_relative_to(Path(workspace).resolve()):
        raise ValueError(f"{path} is outside the workspace")
    return real


def _list_two_levels(root: Path) -> list[str]:
    found: list[str] = []

    def walk(folder: Path, depth: int) -> None:
        for entry in folder.iterdir():
            if entry.name.startswith("."):
                continue
            found.append(str(entry.resolve()) + ("/" if entry.is_dir() else ""))
            if entry.is_dir() and depth < 2:
                walk(entry, depth + 1)

    if root.is_dir():
        walk(root, 1)
    return sorted(found)


def _ls(runtime: ToolRuntime, description: str, path: str) -> str:
    workspace = runtime.state["thread_data"]["workspace_path"]
    try:
        entries = _list_two_levels(_real_path(path, workspace))
    except (OSError, ValueError) as err:
        return f"Error: {err}"
    if not entries:
        return "(empty)"
    real_root = str(Path(workspace).resolve())
    return "\n".join(entries).replace(real_root, VIRTUAL_WORKSPACE)[:TOOL_OUTPUT_BUDGET_CHARS]


@tool("ls", parse_docstring=True)
def ls_tool(runtime: ToolRuntime, description: str, path: str) -> str:
    """Show a folder's files and folders, two levels down.

    Args:
        description: Why this folder is listed, in a few words.
        path: Absolute path of the folder.
    """
    return _ls(runtime, description, path)


async def _ls_async(runtime: ToolRuntime, description: str, path: str) -> str:
    if not runtime.state.get("sandbox"):
        return "Error: no sandbox"
    return await asyncio.to_thread(_ls, runtime, description, path)


ls_tool.coroutine = _ls_async


@tool("bash", parse_docstring=True)
def bash_tool(runtime: ToolRuntime, description: str, command: str) -> str:
    """Run a shell command in the sandbox.

    Args:
        description: Why this command is run, in a few words.
        command: The command line.
    """
    return "Error: not used in this benchmark"


@tool("read_file", parse_docstring=True)
def read_file_tool(
    runtime: ToolRuntime, description: str, path: str, start_line: int | None = None, end_line: int | None = None
) -> str:
    """Read a text file.

    Args:
        description: Why this file is read, in a few words.
        path: Absolute path of the file.
        start_line: First line to read, counted from 1.
        end_line: Last line to read.
    """
    return "Error: not used in this benchmark"


@tool("write_file", parse_docstring=True)
def write_file_tool(runtime: ToolRuntime, description: str, path: str, content: str, append: bool = False) -> str:
    """Write a text file.

    Args:
        description: Why this file is written, in a few words.
        path: Absolute path of the file.
        content: The text.
        append: Add to the end instead of replacing.
    """
    return "Error: not used in this benchmark"


@tool("str_replace", parse_docstring=True)
def str_replace_tool(
    runtime: ToolRuntime, description: str, path: str, old_str: str, new_str: str, replace_all: bool = False
) -> str:
    """Replace a piece of text in a file.

    Args:
        description: Why the file is changed, in a few words.
        path: Absolute path of the file.
        old_str: The text to replace.
        new_str: The new text.
        replace_all: Replace every occurrence.
    """
    return "Error: not used in this benchmark"


TOOLS = [bash_tool, ls_tool, read_file_tool, write_file_tool, str_replace_tool]


# ---- middlewares: DeerFlow's subagent chain, its hooks, small bodies ----


def _last_ai(state: dict) -> AIMessage | None:
    messages = state.get("messages") or []
    return messages[-1] if messages and isinstance(messages[-1], AIMessage) else None


class InputSanitization(AgentMiddleware):
    async def awrap_model_call(self, request, handler):
        for message in request.messages:
            if isinstance(message, HumanMessage) and isinstance(message.content, str) and "\x00" in message.content:
                message.content = message.content.replace("\x00", "")
        return await handler(request)


class ToolOutputBudget(AgentMiddleware):
    async def awrap_tool_call(self, request, handler):
        result = await handler(request)
        if isinstance(result, ToolMessage) and isinstance(result.content, str):
            if len(result.content) > TOOL_OUTPUT_BUDGET_CHARS:
                result.content = result.content[:TOOL_OUTPUT_BUDGET_CHARS]
        return result

    async def awrap_model_call(self, request, handler):
        total = sum(len(m.content) for m in request.messages if isinstance(m, ToolMessage) and isinstance(m.content, str))
        if total > 10 * TOOL_OUTPUT_BUDGET_CHARS:
            logger.warning("tool results in the transcript: %d characters", total)
        return await handler(request)


class ToolResultSanitization(AgentMiddleware):
    _controls = {c: None for c in range(32) if c not in (9, 10, 13)}

    async def awrap_tool_call(self, request, handler):
        result = await handler(request)
        if isinstance(result, ToolMessage) and isinstance(result.content, str):
            result.content = result.content.translate(self._controls)
        return result


class ThreadData(AgentMiddleware):
    def __init__(self, workspace: str) -> None:
        super().__init__()
        self.workspace = workspace

    async def abefore_agent(self, state, runtime):
        return {"thread_data": {"workspace_path": self.workspace, "uploads_path": None, "outputs_path": None}}


class Sandbox(AgentMiddleware):
    async def abefore_agent(self, state, runtime):
        return {"sandbox": {"sandbox_id": "local"}}

    async def aafter_agent(self, state, runtime):
        return None

    async def awrap_tool_call(self, request, handler):
        return await handler(request)


class DanglingToolCall(AgentMiddleware):
    async def awrap_model_call(self, request, handler):
        answered = {m.tool_call_id for m in request.messages if isinstance(m, ToolMessage)}
        dangling = [
            call["id"]
            for m in request.messages
            if isinstance(m, AIMessage)
            for call in m.tool_calls
            if call["id"] not in answered
        ]
        if dangling:
            raise RuntimeError(f"dangling tool calls {dangling}")
        return await handler(request)


class LLMErrorHandling(AgentMiddleware):
    async def awrap_model_call(self, request, handler):
        try:
            return await handler(request)
        except Exception as err:  # noqa: BLE001 - as DeerFlow's, every model failure becomes an answer
            return AIMessage(content=f"LLM request failed: {err}")


class SandboxAudit(AgentMiddleware):
    async def awrap_tool_call(self, request, handler):
        if request.tool_call["name"] == "bash":
            logger.info("audit: %s", request.tool_call["args"].get("command"))
        return await handler(request)


class ReadBeforeWrite(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()

    async def awrap_tool_call(self, request, handler):
        path = request.tool_call["args"].get("path")
        if request.tool_call["name"] in ("write_file", "str_replace") and path not in self.read:
            return ToolMessage(content=f"Error: read {path} first", tool_call_id=request.tool_call["id"], status="error")
        if request.tool_call["name"] == "read_file":
            self.read.add(path)
        return await handler(request)


class ToolErrorHandling(AgentMiddleware):
    async def awrap_tool_call(self, request, handler):
        try:
            return await handler(request)
        except Exception as err:  # noqa: BLE001 - as DeerFlow's, a failed tool becomes an error result
            return ToolMessage(content=f"Error: {err}", tool_call_id=request.tool_call["id"], status="error")


class SkillActivation(AgentMiddleware):
    async def awrap_model_call(self, request, handler):
        latest = next((m for m in reversed(request.messages) if isinstance(m, HumanMessage)), None)
        if latest is not None and str(latest.content).startswith("/"):
            logger.info("slash command: %s", str(latest.content).split()[0])
        return await handler(request)


class SkillToolPolicy(AgentMiddleware):
    async def awrap_model_call(self, request, handler):
        return await handler(request.override(tools=[t for t in request.tools if getattr(t, "name", "") != "task"]))

    async def awrap_tool_call(self, request, handler):
        return await handler(request)


class LoopDetection(AgentMiddleware):
    """Hard stop when one set of tool calls repeats 5 times in the last 20 (DeerFlow's defaults)."""

    def __init__(self) -> None:
        super().__init__()
        self.window: list[str] = []

    async def abefore_agent(self, state, runtime):
        self.window = []

    async def aafter_model(self, state, runtime):
        message = _last_ai(state)
        if message is None or not message.tool_calls:
            return None
        calls = sorted(json.dumps([c["name"], c["args"]], sort_keys=True) for c in message.tool_calls)
        digest = hashlib.md5("|".join(calls).encode()).hexdigest()
        self.window = (self.window + [digest])[-20:]
        if self.window.count(digest) >= 5:
            stripped = message.model_copy(update={"tool_calls": []})
            return {"messages": [stripped]}
        return None

    async def aafter_agent(self, state, runtime):
        self.window = []

    async def awrap_model_call(self, request, handler):
        return await handler(request)


class TokenBudget(AgentMiddleware):
    def __init__(self, max_tokens: int = 2_000_000) -> None:
        super().__init__()
        self.max_tokens = max_tokens
        self.used = 0

    async def abefore_agent(self, state, runtime):
        self.used = 0

    async def aafter_model(self, state, runtime):
        message = _last_ai(state)
        usage = message.usage_metadata if message is not None else None
        if usage:
            self.used += usage.get("total_tokens", 0)
        if message is not None and self.used >= self.max_tokens and message.tool_calls:
            return {"messages": [message.model_copy(update={"tool_calls": []})]}
        return None

    async def aafter_agent(self, state, runtime):
        return None

    async def awrap_model_call(self, request, handler):
        return await handler(request)


class SafetyFinishReason(AgentMiddleware):
    async def aafter_model(self, state, runtime):
        message = _last_ai(state)
        if message is not None and message.response_metadata.get("finish_reason") == "content_filter":
            return {"messages": [message.model_copy(update={"tool_calls": []})]}
        return None


class DurableContext(AgentMiddleware):
    async def abefore_model(self, state, runtime):
        return None

    async def aafter_model(self, state, runtime):
        return None

    async def awrap_model_call(self, request, handler):
        return await handler(request)


class SubagentDateContext(AgentMiddleware):
    async def abefore_agent(self, state, runtime):
        today = datetime.now().strftime("%Y-%m-%d, %A")
        return {"messages": [SystemMessage(content=f"<current_date>{today}</current_date>")]}


class SystemMessageCoalescing(AgentMiddleware):
    async def awrap_model_call(self, request, handler):
        systems = [m for m in request.messages if isinstance(m, SystemMessage)]
        if not systems:
            return await handler(request)
        parts = ([request.system_message.text] if request.system_message else []) + [m.text for m in systems]
        return await handler(
            request.override(
                system_message=SystemMessage(content="\n\n".join(parts)),
                messages=[m for m in request.messages if not isinstance(m, SystemMessage)],
            )
        )


def middlewares(model: ChatOpenAI, workspace: str) -> list[AgentMiddleware]:
    return [
        InputSanitization(),
        ToolOutputBudget(),
        ToolResultSanitization(),
        ThreadData(workspace),
        Sandbox(),
        DanglingToolCall(),
        LLMErrorHandling(),
        SandboxAudit(),
        ReadBeforeWrite(),
        ToolErrorHandling(),
        SkillActivation(),
        SkillToolPolicy(),
        LoopDetection(),
        TokenBudget(),
        SafetyFinishReason(),
        DurableContext(),
        SummarizationMiddleware(
            model=model, trigger=("tokens", 32000), keep=("messages", 10), trim_tokens_to_summarize=15564
        ),
        SubagentDateContext(),
        SystemMessageCoalescing(),
    ]


# ---- the executor ----


class TokenCollector(BaseCallbackHandler):
    def __init__(self) -> None:
        self.records: list[dict[str, int]] = []

    def on_llm_end(self, response, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
                if usage:
                    self.records.append(dict(usage))


def _step_record(message: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"id": message.id, "type": message.type, "content": message.content}
    if isinstance(message, AIMessage):
        record["tool_calls"] = [dict(call) for call in message.tool_calls]
    if isinstance(message, ToolMessage):
        record["tool_call_id"] = message.tool_call_id
    return record


async def run_subagent(base_url: str, prompt: str, workspace: str, max_turns: int) -> dict[str, Any]:
    trace = uuid.uuid4().hex[:8]
    model = ChatOpenAI(
        model="fake-model",
        base_url=base_url,
        api_key="bench",
        streaming=True,
        stream_usage=True,
        max_retries=2,
        timeout=600,
    )
    agent = create_agent(
        model=model,
        tools=TOOLS,
        middleware=middlewares(model, workspace),
        system_prompt=None,
        state_schema=BenchThreadState,
        checkpointer=False,
    )
    collector = TokenCollector()
    config = {"recursion_limit": max_turns, "callbacks": [collector], "tags": ["subagent:general-purpose"]}
    state = {"messages": [SystemMessage(content=SYSTEM_PROMPT), HumanMessage(content=prompt)]}
    steps: list[dict[str, Any]] = []
    seen: set[str] = set()
    processed = 0
    final: dict[str, Any] = {}
    try:
        async for chunk in agent.astream(state, config=config, stream_mode="values"):
            final = chunk
            messages = chunk.get("messages", [])
            for message in messages[processed:]:
                if isinstance(message, (AIMessage, ToolMessage)) and message.id not in seen:
                    seen.add(message.id)
                    steps.append(_step_record(message))
            processed = len(messages)
            logger.info("[trace=%s] general-purpose: %d step messages", trace, len(steps))
    except Exception as err:  # noqa: BLE001 - reported to the bench, which fails the run
        return {"status": "failed", "steps": len(steps), "error": f"{type(err).__name__}: {err}"}
    last = _last_ai(final)
    return {"status": "completed" if last is not None else "failed", "steps": len(steps), "error": None}


class IsolatedLoop:
    """One event loop in a thread of its own, that every subagent runs on (DeerFlow's persistent loop)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.call_soon(started.set)
            self.loop.run_forever()

        threading.Thread(target=run, name="subagent-persistent-loop", daemon=True).start()
        started.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    args = parser.parse_args()
    # DeerFlow's default: its own modules log at info, the libraries at their defaults.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    logger.setLevel(logging.INFO)
    isolated = IsolatedLoop()
    scheduler = ThreadPoolExecutor(max_workers=3, thread_name_prefix="subagent-scheduler-")

    def execute(task: dict[str, str], max_turns: int) -> dict[str, Any]:
        future = asyncio.run_coroutine_threadsafe(
            run_subagent(args.base_url, task["prompt"], task["workspace"], max_turns), isolated.loop
        )
        return future.result(timeout=900)

    libraries = ("langchain", "langchain-core", "langchain-openai", "langgraph", "openai", "httpx")
    versions = {name: version(name) for name in libraries}
    print(json.dumps({"ready": True, "python": platform.python_version(), "versions": versions}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        futures: list[Future] = [
            scheduler.submit(execute, task, request.get("max_turns", 150)) for task in request["tasks"]
        ]
        print(json.dumps({"results": [f.result() for f in futures]}), flush=True)


if __name__ == "__main__":
    main()
