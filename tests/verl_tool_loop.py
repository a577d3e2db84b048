"""verl's multi-turn code tool against a /run_code endpoint, run as a script with verl 0.7.1 first on sys.path.

verl 0.7.1 is the last release with `verl.tools.sandbox_fusion_tools.SandboxFusionTool`; the test venv has a newer
verl, so the test runs this in a process of its own (tests/test_verl_tool.py). The tools come from verl's YAML tool
config through `initialize_tools_from_config`, as its agent loop builds them, and each model tool call goes through
`ToolAgentLoop._call_tool` (create, execute, release, truncate), as a rollout turn does.

    python -m tests.verl_tool_loop RUN_CODE_URL TURNS_JSON  ->  prints, per turn, each call's tool message text

TURNS_JSON: a list of turns, each a list of tool calls ({"name": ..., "arguments": {...}}).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from types import SimpleNamespace

import ray
import verl
from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop
from verl.experimental.agent_loop.tool_parser import FunctionCall
from verl.tools.utils.tool_registry import initialize_tools_from_config

# verl's examples/sglang_multiturn/config/tool_config/sandbox_fusion_tool_config.yaml, with our URL.
TOOL_CONFIG = """
tools:
  - class_name: "verl.tools.sandbox_fusion_tools.SandboxFusionTool"
    config:
      sandbox_fusion_url: "{url}"
      num_workers: 4
      enable_global_rate_limit: true
      rate_limit: 4
      default_timeout: 30
      default_language: "python"
      memory_limit_mb: 1024
      type: native
    tool_schema:
      type: "function"
      function:
        name: "code_interpreter"
        description: "A tool for executing code."
        parameters:
          type: "object"
          properties:
            code:
              type: "string"
              description: "The code to execute."
          required: ["code"]
"""


async def _rollout(loop: SimpleNamespace, turns: list[list[dict]]) -> list[list[str]]:
    """Turn by turn, the turn's tool calls at once, as the agent loop runs them (asyncio.gather)."""
    texts = []
    for turn in turns:
        calls = [FunctionCall(name=call["name"], arguments=json.dumps(call["arguments"])) for call in turn]
        answers = await asyncio.gather(*(ToolAgentLoop._call_tool(loop, call, {}, agent_data=None) for call in calls))
        texts.append([response.text for response, _reward, _metrics in answers])
    return texts


def main(url: str, turns: list[list[dict]]) -> list[list[str]]:
    assert verl.__version__ == "0.7.1", verl.__file__
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as config:
        config.write(TOOL_CONFIG.format(url=url))
        config.flush()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            tools = initialize_tools_from_config(config.name)
            # What _call_tool reads from its agent loop (its config: max_tool_response_length, truncate side).
            loop = SimpleNamespace(
                tools={tool.name: tool for tool in tools},
                max_tool_response_length=256,
                tool_response_truncate_side="middle",
            )
            return asyncio.run(_rollout(loop, turns))
        finally:
            ray.shutdown()


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], json.loads(sys.argv[2]))))
