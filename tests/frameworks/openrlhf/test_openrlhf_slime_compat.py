"""OpenRLHF's and slime's own calling code against the real service and our adapters.

OpenRLHF (PyPI `openrlhf` 0.11.2, in its own environment with its own pins: tests/frameworks/): its rollout executor
`openrlhf.utils.agent.SingleTurnAgentExecutor.execute` builds the query (prompt tokens,
left-truncated to fit, plus the response, decoded with special tokens) and calls the reward
either over HTTP (`--reward.remote_url http://.../get_reward`) or through the `reward_func`
it loads from a `.py` path (`--reward.remote_url .../trainer_client/adapters/openrlhf.py`).
What the executor returns is what its samples generator makes Experiences of (`reward`, `scores`,
`extra_logs`).
Prompts come from its `preprocess_data` with a chat template. The generation engine is the
one stand-in: vLLM needs a GPU for OpenRLHF, and the test must choose the responses. For the same reason its
environment has no vLLM (OpenRLHF pins vllm 0.29, whose CPU build needs a torchvision that does not import beside
the CPU torch), so the samples generator itself, whose module imports vLLM, is not imported.

slime (not on PyPI; github.com/THUDM/slime at 624b824a898ab0ec1fcb4d373004c7f3852bf515):
`slime/rollout/rm_hub/__init__.py` `remote_rm` POSTs `{"prompt", "response", "label"}` to
`--rm-url` and takes `await resp.json()` as the reward; `async_rm` / `batched_async_rm`
await the function that `slime.utils.misc.load_function(args.custom_rm_path)` resolves,
as `fn(args, sample)` or, with `--group-rm`, `fn(args, samples)`; `generate_and_rm_group`
gathers the per-sample calls of one group.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import logging
import re
import unicodedata
from argparse import Namespace
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest
from openrlhf.datasets.prompts_dataset import preprocess_data
from openrlhf.utils.agent import SingleTurnAgentExecutor
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

import trainer_client.adapters.openrlhf
from reward_api.graders.length import estimate_num_tokens
from reward_api.local import LocalServer
from tests.scrape import metric
from trainer_client.adapters import slime
from trainer_client.adapters.common import FAILURES

OPENRLHF_FILE = str(Path(trainer_client.adapters.openrlhf.__file__))
RIGHT, WRONG = "<think>two and two make four</think> The answer is \\boxed{4}.", "<think>hm</think> \\boxed{5}"
QUESTION = "Café owner's puzzle: what is 2 + 2 ? Answer , then explain ."


# --- OpenRLHF ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatModel:
    """A model family's chat template (its tokenizer_config.json, the plain-message branch) and special tokens."""

    template: str
    specials: tuple[str, ...]
    eos: str
    bos: str | None = None


QWEN = ChatModel(
    "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- else %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
    "<|im_end|>\\n' }}{%- endif %}{%- for message in messages %}{%- if not (message.role == 'system' and loop.first) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
    ("<|im_start|>", "<|im_end|>", "<|endoftext|>"),
    eos="<|im_end|>",
)
LLAMA3 = ChatModel(
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + "
    "message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}",
    ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"),
    eos="<|eot_id|>",
    bos="<|begin_of_text|>",
)
DEEPSEEK_R1 = ChatModel(
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'system' %}{{ message['content'] }}"
    "{% elif message['role'] == 'user' %}{{ '<｜User｜>' + message['content'] }}"
    "{% elif message['role'] == 'assistant' %}"
    "{{ '<｜Assistant｜>' + message['content'] + '<｜end▁of▁sentence｜>' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<｜Assistant｜><think>\\n' }}{% endif %}",
    ("<｜begin▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<｜end▁of▁sentence｜>"),
    eos="<｜end▁of▁sentence｜>",
    bos="<｜begin▁of▁sentence｜>",
)


def chat_tokenizer(model: ChatModel, nfc: bool = False, clean_up_spaces: bool = False) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer as these models ship (Qwen2's adds an NFC normaliser), trained here on a few
    lines. `clean_up_spaces` decodes as transformers did for tokenizers configured with
    `clean_up_tokenization_spaces` (Llama 3's) before 5.x stopped doing it for BPE."""
    core = Tokenizer(models.BPE())
    core.normalizer = normalizers.NFC() if nfc else None
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    core.train_from_iterator([QUESTION, RIGHT, WRONG, "You are a helpful assistant."], trainer)
    core.add_special_tokens([AddedToken(token, special=True, normalized=False) for token in model.specials])
    return PreTrainedTokenizerFast(
        tokenizer_object=core, chat_template=model.template, eos_token=model.eos, bos_token=model.bos,
        clean_up_tokenization_spaces=clean_up_spaces,
        clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output=clean_up_spaces,
    )  # fmt: skip


@dataclass
class SamplingParams:
    """The fields of vLLM's SamplingParams that OpenRLHF's executor reads."""

    max_tokens: int | None
    logprobs: int | None = None


class ScriptedEngine:
    """Stands in for OpenRLHF's vLLM rollout actor (`generate(prompt_token_ids, sampling_params)`):
    answers each call with the next scripted response and the model's end-of-turn token."""

    def __init__(self, tokenizer: PreTrainedTokenizerFast, responses: list[str]) -> None:
        self.tokenizer = tokenizer
        self.responses = list(responses)

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None) -> Any:
        text = self.responses.pop(0)
        token_ids = [*self.tokenizer(text=text, add_special_tokens=False)["input_ids"], self.tokenizer.eos_token_id]
        output = SimpleNamespace(token_ids=token_ids, text=text, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[output])


def openrlhf_prompt(tokenizer: PreTrainedTokenizerFast, question: str) -> str:
    """OpenRLHF's prompt dataset with `--apply_chat_template`."""
    prompt, _ = preprocess_data(
        {"input": question}, input_key="input", apply_chat_template=tokenizer.apply_chat_template
    )
    return prompt


def rollout(
    remote_rm_url: str, tokenizer: PreTrainedTokenizerFast, prompt: str, label: str, responses: list[str],
    max_length: int = 4096,
) -> list[dict[str, Any]]:  # fmt: skip
    """One prompt's samples as OpenRLHF's RolloutRayActor.generate_responses runs them: executes, gathered."""
    executor = SingleTurnAgentExecutor(remote_rm_url)
    engine = ScriptedEngine(tokenizer, responses)
    params = SamplingParams(max_tokens=64)

    async def samples() -> list[dict[str, Any]]:
        runs = [executor.execute(prompt, label, params, max_length, tokenizer, engine) for _ in responses]
        return list(await asyncio.gather(*runs))

    outputs = asyncio.run(samples())
    assert all(output["reward"] is not None for output in outputs), "OpenRLHF got no reward (it logs why at INFO)"
    return outputs


@pytest.fixture
def remote(request: pytest.FixtureRequest, server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> Callable:
    """`--reward.remote_url` for a profile: the service's /get_reward, or our reward_func file."""

    def url_for(profile: str, group_size: int | None = None) -> str:
        if request.param == "http":
            return f"{server.url}/get_reward?profile={profile}" + (f"&group_size={group_size}" if group_size else "")
        monkeypatch.setenv("REWARD_SERVICE_URL", server.url)
        monkeypatch.setenv("REWARD_SERVICE_PROFILE", profile)
        if group_size:
            monkeypatch.setenv("REWARD_SERVICE_GROUP_SIZE", str(group_size))
        return OPENRLHF_FILE

    return url_for


def both_paths(test: Callable) -> Callable:
    return pytest.mark.parametrize("remote", ["http", "file"], indirect=True)(test)


@both_paths
def test_dapo_groups_are_filtered_by_accuracy_not_reward(remote: Callable) -> None:
    tokenizer = chat_tokenizer(QWEN)
    prompt = openrlhf_prompt(tokenizer, QUESTION)
    groups = {"one right": [RIGHT, WRONG, WRONG, WRONG], "all wrong": [WRONG] * 4, "all right": [RIGHT] * 4}
    kept = {}
    for name, responses in groups.items():
        outputs = rollout(remote("dapo"), tokenizer, prompt, "4", responses)
        scores = [output["scores"][0] for output in outputs]  # what SamplesGenerator._generate_vllm filters by
        assert [output["reward"][0] for output in outputs] == [1.0 if r == RIGHT else -1.0 for r in responses]
        assert scores == [1.0 if r == RIGHT else 0.0 for r in responses]
        assert [output["extra_logs"]["accuracy"][0] for output in outputs] == scores
        low, high = 0.0, 1.0  # --algo.dynamic_filtering_range default; a group is kept when low < mean < high
        kept[name] = low < sum(scores) / len(scores) < high
    assert kept == {"one right": True, "all wrong": False, "all right": False}


# A prompt's samples of different lengths, right and wrong: Kimi's length reward differs within the group.
KIMI_RESPONSES = [
    RIGHT,
    "<think>two and two make four, as counting on fingers shows: one, two, three, four</think> \\boxed{4}",
    WRONG,
    "<think>two and two, perhaps five if one is generous with the second two</think> \\boxed{5}",
]


@both_paths
def test_kimi_length_rewards_over_a_prompts_samples_called_one_by_one(remote: Callable) -> None:
    """OpenRLHF's executor calls the reward once per sample: with `group_size` the prompt's samples meet in the
    service and each gets Kimi's length reward over the whole group (without it, each alone gets 0)."""
    tokenizer = chat_tokenizer(QWEN)
    prompt = openrlhf_prompt(tokenizer, QUESTION)
    lengths = [estimate_num_tokens(response) for response in KIMI_RESPONSES]
    expected = [kimi_reward(i in (0, 1), n, lengths) for i, n in enumerate(lengths)]  # the first two are right
    assert len(set(expected)) > 2
    outputs = rollout(remote("kimi", group_size=4), tokenizer, prompt, "4", KIMI_RESPONSES)
    assert [output["reward"][0] for output in outputs] == pytest.approx(expected)  # one reward per sample


@both_paths
def test_an_eval_set_whose_labels_give_their_group_size_is_answered_without_the_training_wait(
    remote: Callable, server: LocalServer
) -> None:
    """OpenRLHF evaluates with `--eval.n_samples_per_prompt` 4 through the training URL (`group_size` 8) and sends
    nothing that tells eval apart: eval labels that carry `"group_size": 4` are answered when the 4 are in, over
    the 4, as a whole group, instead of `partial` after the 90 s group wait."""
    tokenizer = chat_tokenizer(QWEN)
    prompt = openrlhf_prompt(tokenizer, "An eval set's question: what is 2 + 2 ?")
    lengths = [estimate_num_tokens(response) for response in KIMI_RESPONSES]
    expected = [kimi_reward(i in (0, 1), n, lengths) for i, n in enumerate(lengths)]
    label = json.dumps({"reference": "4", "group_size": len(KIMI_RESPONSES)})  # a string, as a dataset column
    whole_before = metric(server, "reward_group_items_total", outcome="complete")
    outputs = rollout(remote("kimi", group_size=8), tokenizer, prompt, label, KIMI_RESPONSES)
    assert [output["reward"][0] for output in outputs] == pytest.approx(expected)
    assert metric(server, "reward_group_items_total", outcome="complete") - whole_before == len(KIMI_RESPONSES)


@both_paths
@pytest.mark.parametrize(
    ("model", "tokenizer_options", "keep_prompt_tokens", "question"),
    [
        (QWEN, {"nfc": True}, None, unicodedata.normalize("NFD", QUESTION)),  # accents sent decomposed
        (LLAMA3, {}, 24, QUESTION),  # OpenRLHF keeps the prompt's last 24 tokens
        (DEEPSEEK_R1, {"clean_up_spaces": True}, None, QUESTION),  # "2 ?" decodes as "2?"
        (QWEN, {"nfc": True, "clean_up_spaces": True}, 30, unicodedata.normalize("NFD", QUESTION)),
    ],
    ids=["qwen-nfc", "llama3-truncated", "deepseek-cleaned-up", "qwen-all-three"],
)  # fmt: skip
def test_response_is_graded_alone_when_the_decoded_prompt_differs(
    remote: Callable, model: ChatModel, tokenizer_options: dict, keep_prompt_tokens: int | None, question: str
) -> None:
    tokenizer = chat_tokenizer(model, **tokenizer_options)
    prompt = openrlhf_prompt(tokenizer, question)
    response = RIGHT.removeprefix("<think>") if model is DEEPSEEK_R1 else RIGHT  # R1's template opens <think>
    max_length = 64 + (keep_prompt_tokens or 4096)
    [output] = rollout(remote("format"), tokenizer, prompt, "4", [response], max_length=max_length)
    query = tokenizer.decode(output["observation_tokens"], skip_special_tokens=False)  # what OpenRLHF sent
    assert not query.startswith(prompt), "the decoded prompt should differ from the prompt text"
    assert output["extra_logs"] == {"accuracy": [1.0], "format": [1.0], "graded": [1.0]}
    assert output["reward"] == [1.0]


def v1_requests(server: LocalServer) -> int:
    with server.client() as client:
        metrics = client.get("/metrics").text
    found = re.search(r'reward_requests_total\{code="200",endpoint="/v1/rewards"\} (\d+)', metrics)
    return int(float(found.group(1))) if found else 0


def test_per_sample_reward_func_calls_go_out_in_few_requests(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REWARD_SERVICE_URL", server.url)
    monkeypatch.setenv("REWARD_SERVICE_PROFILE", "accuracy")
    tokenizer = chat_tokenizer(QWEN)
    prompt = openrlhf_prompt(tokenizer, "Per-sample calls: what is 2 + 2 ?")
    responses = [RIGHT, WRONG] * 8
    before = v1_requests(server)
    outputs = rollout(OPENRLHF_FILE, tokenizer, prompt, "4", responses)
    requests = v1_requests(server) - before
    assert [output["reward"] for output in outputs] == [[1.0] if r == RIGHT else [0.0] for r in responses]
    assert 1 <= requests <= len(responses) // 2, f"{len(responses)} per-sample calls took {requests} requests"


def test_a_sample_that_cannot_be_graded_is_counted_and_logged(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("REWARD_SERVICE_URL", server.url)
    monkeypatch.setenv("REWARD_SERVICE_PROFILE", "dapo")
    tokenizer = chat_tokenizer(QWEN)
    prompt = openrlhf_prompt(tokenizer, QUESTION)
    unknown_task = '{"task": "no-such-task", "reference": "4"}'
    before = FAILURES[("openrlhf", "invalid")]
    with caplog.at_level(logging.WARNING, logger="trainer_client.adapters"):
        [from_file] = rollout(OPENRLHF_FILE, tokenizer, prompt, unknown_task, [RIGHT])
    [over_http] = rollout(f"{server.url}/get_reward?profile=dapo", tokenizer, prompt, unknown_task, [RIGHT])
    for output in (from_file, over_http):  # the failure reward, score 0, graded 0: never a right answer's 1
        assert (output["reward"], output["scores"], output["extra_logs"]["graded"]) == ([0.0], [0.0], [0.0])
    assert FAILURES[("openrlhf", "invalid")] == before + 1
    assert "openrlhf: 1 of 1 rewards not computed (invalid: 1)" in caplog.text
    assert "/get_reward: 1 of 1 rewards not computed" in server.log()


# --- slime ------------------------------------------------------------------------------------


@dataclass
class Sample:
    """The fields of slime.utils.types.Sample (slime 624b824a) that reward functions and rollout hooks read or set."""

    class Status(Enum):
        PENDING = "pending"
        COMPLETED = "completed"
        ABORTED = "aborted"

    status: Status = Status.PENDING
    group_index: int | None = None
    index: int | None = None
    prompt: str | list[dict[str, str]] = ""
    response: str = ""
    response_length: int = 0
    label: str | None = None
    reward: float | dict[str, Any] | None = None
    remove_sample: bool = False
    metadata: dict = field(default_factory=dict)


async def slime_remote_rm(args: Namespace, sample: Sample) -> Any:
    """slime's `remote_rm` request (rm_hub/__init__.py at 624b824a): one sample, `resp.json()` is the reward."""
    payload = {"prompt": sample.prompt, "response": sample.response, "label": sample.label}
    connector = aiohttp.TCPConnector(limit=64, enable_cleanup_closed=True)
    session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120))
    async with session, session.post(args.rm_url, json=payload) as resp:
        resp.raise_for_status()
        return await resp.json()


def reward_value(sample: Sample, args: Namespace) -> float:
    """slime's Sample.get_reward_value."""
    return sample.reward if not args.reward_key else sample.reward[args.reward_key]


@pytest.mark.parametrize(
    ("sample", "query", "reward_key", "expected"),
    [
        (Sample(prompt="What is 2+2?", response=RIGHT, label="4"), "", None, 1.0),
        (Sample(prompt="What is 2+2?", response=WRONG, label="4"), "", None, 0.0),
        (Sample(prompt=[{"role": "user", "content": "sort: 3 1 2 ->"}], response="1 2 3",
                label='{"task": "sort", "reference": [3, 1, 2]}'), "", None, 1.0),
        (Sample(prompt="What is 2+2?", response=RIGHT, label="4"), "?profile=r1&reward_key=reward", "reward", 3.0),
    ],
)  # fmt: skip
def test_slime_remote_rm_takes_the_answer_as_the_reward(
    server: LocalServer, sample: Sample, query: str, reward_key: str | None, expected: float
) -> None:
    args = Namespace(rm_type="remote_rm", rm_url=f"{server.url}/slime{query}", reward_key=reward_key)
    sample.reward = asyncio.run(slime_remote_rm(args, sample))
    assert reward_value(sample, args) == expected
    if reward_key:
        assert sample.reward["status"] == "ok" and set(sample.reward["components"]) == {
            "accuracy",
            "format",
            "language",
        }


def load_function(path: str) -> Callable:
    """slime.utils.misc.load_function: how `--custom-rm-path` is resolved."""
    module_path, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module_path), attr)


def kimi_reward(correct: bool, length: int, lengths: list[int]) -> float:
    """Kimi k1.5: accuracy plus lambda = 0.5 - (len - min) / (max - min); wrong answers get min(0, lambda)."""
    shortest, longest = min(lengths), max(lengths)
    lam = 0.0 if longest == shortest else 0.5 - (length - shortest) / (longest - shortest)
    return float(correct) + (lam if correct else min(0.0, lam))


# Two prompts' groups, their samples interleaved as they finish generating: (group_index, right?, length).
SAMPLES = [(7, True, 10), (8, False, 40), (7, True, 30), (8, True, 20), (7, False, 50), (8, True, 60),
           (7, False, 20), (8, False, 10)]  # fmt: skip


def slime_samples() -> list[Sample]:
    return [
        Sample(group_index=g, index=i, prompt="2+2?", response=RIGHT if right else WRONG, response_length=n, label="4")
        for i, (g, right, n) in enumerate(SAMPLES)
    ]


def expected_kimi_rewards() -> list[float]:
    lengths = {g: [n for h, _, n in SAMPLES if h == g] for g, _, _ in SAMPLES}
    return [kimi_reward(right, n, lengths[g]) for g, right, n in SAMPLES]


def test_slime_remote_rm_completes_a_prompts_group_across_requests(server: LocalServer) -> None:
    """slime's `remote_rm` posts each sample alone to `--rm-url`: with `group_size` there, a prompt's samples are
    its group and each gets Kimi's length reward over all of them."""
    args = Namespace(rm_type="remote_rm", rm_url=f"{server.url}/slime?profile=kimi&group_size=4", reward_key=None)
    samples = [Sample(prompt=QUESTION, response=response, label="4") for response in KIMI_RESPONSES]
    lengths = [estimate_num_tokens(response) for response in KIMI_RESPONSES]

    async def rewarded() -> list[float]:
        return list(await asyncio.gather(*(slime_remote_rm(args, sample) for sample in samples)))

    expected = [kimi_reward(i in (0, 1), n, lengths) for i, n in enumerate(lengths)]
    assert asyncio.run(rewarded()) == pytest.approx(expected)


def test_slime_custom_rm_groups_by_group_index_per_sample_and_with_group_rm(server: LocalServer) -> None:
    args = Namespace(
        custom_rm_path="trainer_client.adapters.slime.reward", group_rm=False, n_samples_per_prompt=4,
        reward_service_url=server.url, reward_service_profile="kimi",
    )  # fmt: skip
    rm = load_function(args.custom_rm_path)

    async def generated_then_rewarded(sample: Sample) -> float:
        await asyncio.sleep(0.05 * sample.index)  # samples finish generating one after another
        return await rm(args, sample)

    async def per_sample() -> list[float]:  # generate_and_rm_group: each sample's async_rm, gathered
        return list(await asyncio.gather(*(generated_then_rewarded(sample) for sample in slime_samples())))

    async def group_rm() -> list[float]:  # --group-rm: batched_async_rm(args, group), one call per group
        groups = [[s for s in slime_samples() if s.group_index == g] for g in (7, 8)]
        rewards = {s.index: r for group in groups for s, r in zip(group, await rm(args, group), strict=True)}
        return [rewards[i] for i in range(len(SAMPLES))]

    expected = expected_kimi_rewards()
    assert len(set(expected)) > 3, "the length rewards should differ within a group"
    assert asyncio.run(per_sample()) == pytest.approx(expected)
    assert asyncio.run(group_rm()) == pytest.approx(expected)


async def slime_generate_and_rm(args: Namespace, sample: Sample, generate: Callable) -> Sample:
    """slime's `generate_and_rm` (sglang_rollout.py at 624b824a) for one sample: generate, the rollout sample hooks
    (`--rollout-sample-hook-path`, as `sample_hooks._apply_to_sample` calls them), then the reward unless aborted."""
    sample = await generate(sample)
    for path in args.rollout_sample_hook_path:
        hook = load_function(path)
        result = hook(args, sample, rollout_id=0, evaluation=False)
        if inspect.isawaitable(result):
            result = await result
        sample = result if result is not None else sample
    if sample.status == Sample.Status.ABORTED:
        return sample
    if sample.reward is None:
        sample.reward = await load_function(args.custom_rm_path)(args, sample)
    return sample


def test_slime_aborted_samples_free_their_group_at_once(server: LocalServer) -> None:
    """slime aborts a rollout's unfinished samples once it has enough: our rollout hook withdraws each from its
    group, so the group's finished samples get their rewards over the samples that came, not after the group wait
    (90 s; slime's `abort` waits for every pending sample)."""
    args = Namespace(
        custom_rm_path="trainer_client.adapters.slime.reward", n_samples_per_prompt=4,
        rollout_sample_hook_path=["trainer_client.adapters.slime.rollout_sample_hook"],
        reward_service_url=server.url, reward_service_profile="kimi",
    )  # fmt: skip
    finished = {0: (RIGHT, 10), 1: (WRONG, 30)}  # the rest are still generating when the abort comes

    async def generate(sample: Sample) -> Sample:
        if sample.index in finished:
            sample.response, sample.response_length = finished[sample.index]
            sample.status = Sample.Status.COMPLETED
        else:
            await asyncio.sleep(0.5)  # sglang's abort ends the generation
            sample.response, sample.status = "<think>half a tho", Sample.Status.ABORTED
        return sample

    async def group() -> list[Sample]:
        samples = [Sample(group_index=31, index=i, prompt="2+2?", label="4") for i in range(4)]
        return list(await asyncio.gather(*(slime_generate_and_rm(args, s, generate) for s in samples)))

    samples = asyncio.run(asyncio.wait_for(group(), 30))
    assert [s.reward for s in samples[2:]] == [None, None]
    assert [s.reward for s in samples[:2]] == pytest.approx(
        [kimi_reward(True, 10, [10, 30]), kimi_reward(False, 30, [10, 30])]
    )


def test_slime_sample_that_cannot_be_graded_leaves_the_loss(
    server: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    args = Namespace(n_samples_per_prompt=1, reward_service_url=server.url, reward_service_profile="accuracy")
    broken = Sample(prompt="2+2?", response=RIGHT, label='{"task": "no-such-task"}')
    fine = Sample(prompt="2+2?", response=RIGHT, label="4")
    before = FAILURES[("slime", "invalid")]
    with caplog.at_level(logging.WARNING, logger="trainer_client.adapters"):
        rewards = asyncio.run(slime.reward(args, [broken, fine]))
    assert rewards == [0.0, 1.0]
    assert (broken.remove_sample, fine.remove_sample) == (True, False)
    assert FAILURES[("slime", "invalid")] == before + 1
    assert "slime: 1 of 2 rewards not computed (invalid: 1)" in caplog.text
