"""Sampling backends: vLLM (fast, its own copy of the weights) and transformers `generate`.

Both return, per prompt, `n` Samples of token ids. After each policy update the
trainer calls `load_weights(policy)`: vLLM reloads the torch weights in memory; the
transformers backend samples from the policy itself, so it has nothing to do.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Protocol

import torch


@dataclass(frozen=True)
class Sample:
    token_ids: list[int]
    text: str
    finished: bool  # ended with EOS (False: cut at max_new_tokens)


class Generator(Protocol):
    name: str

    def generate(
        self, prompts: list[list[int]], n: int, max_new_tokens: int, temperature: float, top_p: float, seed: int
    ) -> list[list[Sample]]: ...

    def load_weights(self, policy: torch.nn.Module) -> None: ...


def vllm_available() -> bool:
    return importlib.util.find_spec("vllm") is not None


class VLLMGenerator:
    name = "vllm"

    def __init__(
        self,
        model_path: str,
        dtype: str,
        seed: int,
        max_model_len: int | None = None,
        gpu_memory_utilization: float = 0.3,
        cpu_kv_cache_mb: int = 512,
    ) -> None:
        # In-process engine: weight sync reaches the model runner directly (no RPC, no copy to disk).
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        from vllm import LLM

        if torch.cuda.is_available():
            options: dict = {"gpu_memory_utilization": gpu_memory_utilization}
        else:
            options = {"kv_cache_memory_bytes": cpu_kv_cache_mb * 1024 * 1024}
        if max_model_len is not None:
            options["max_model_len"] = max_model_len
        self.llm = LLM(
            model=model_path,
            dtype=dtype,
            seed=seed,
            enforce_eager=True,
            **options,
        )

    def generate(
        self, prompts: list[list[int]], n: int, max_new_tokens: int, temperature: float, top_p: float, seed: int
    ) -> list[list[Sample]]:
        from vllm import SamplingParams

        params = SamplingParams(n=n, max_tokens=max_new_tokens, temperature=temperature, top_p=top_p, seed=seed)
        requests = [{"prompt_token_ids": ids} for ids in prompts]  # the trainer's exact tokens
        outputs = self.llm.generate(requests, params, use_tqdm=False)
        return [
            [Sample(list(o.token_ids), o.text, o.finish_reason == "stop") for o in output.outputs] for output in outputs
        ]

    def load_weights(self, policy: torch.nn.Module) -> None:
        runner = self.llm.llm_engine.model_executor.driver_worker.worker.model_runner
        runner.reload_weights(weights_iterator=((k, v.detach()) for k, v in policy.state_dict().items()))


class TransformersGenerator:
    name = "transformers"

    def __init__(self, policy: torch.nn.Module, tokenizer) -> None:
        self.policy = policy
        self.tokenizer = tokenizer

    @torch.no_grad()
    def generate(
        self, prompts: list[list[int]], n: int, max_new_tokens: int, temperature: float, top_p: float, seed: int
    ) -> list[list[Sample]]:
        torch.manual_seed(seed)
        device = next(self.policy.parameters()).device
        width = max(len(ids) for ids in prompts)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in prompts], device=device)
        attention_mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in prompts], device=device)
        was_training = self.policy.training
        self.policy.eval()
        out = self.policy.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            do_sample=True,
            temperature=temperature,
            top_p=top_p,
            max_new_tokens=max_new_tokens,
            num_return_sequences=n,
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self.tokenizer.eos_token_id,
        )
        self.policy.train(was_training)
        responses = out[:, width:].tolist()
        samples = [self._sample(ids) for ids in responses]
        return [samples[i * n : (i + 1) * n] for i in range(len(prompts))]

    def _sample(self, ids: list[int]) -> Sample:
        eos = self.tokenizer.eos_token_id
        finished = eos in ids
        ids = ids[: ids.index(eos) + 1] if finished else [t for t in ids if t != self.tokenizer.pad_token_id]
        return Sample(ids, self.tokenizer.decode(ids, skip_special_tokens=True), finished)

    def load_weights(self, policy: torch.nn.Module) -> None:
        """Samples from the policy itself: nothing to copy."""
