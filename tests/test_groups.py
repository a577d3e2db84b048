"""Group components over the whole group however the trainer splits it (reward_api/groups.py): the assembler alone,
then the real service with `kimi` over samples sent one request each, incomplete groups answered `timeout`, and
groups without `group_size` formed from the request, saying so."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from reward_api.graders.length import kimi_length_rewards
from reward_api.groups import GroupAssembler, Member, Outcome
from reward_api.local import LocalServer
from tests.scrape import metric


def kimi(members: list[Member]) -> list[float]:
    return kimi_length_rewards([m.length for m in members], [m.correct for m in members])


# --- the assembler alone ------------------------------------------------------------------------------------------


def test_a_group_completes_when_its_last_member_joins() -> None:
    async def scenario() -> tuple[list[Outcome], int]:
        assembler = GroupAssembler(wait_s=30, component=kimi)
        first = [asyncio.ensure_future(assembler.join("g", 3, Member(n, True))) for n in (100, 300)]
        other = asyncio.ensure_future(assembler.join("other", 2, Member(5, True)))
        await asyncio.sleep(0.05)
        assert not any(task.done() for task in first) and assembler.in_progress == 2
        last = await assembler.join("g", 3, Member(200, False))
        in_progress = assembler.in_progress
        other.cancel()  # that group never completes
        return [*(await asyncio.gather(*first)), last], in_progress

    outcomes, in_progress = asyncio.run(asyncio.wait_for(scenario(), 5))
    assert [o.value for o in outcomes] == kimi([Member(100, True), Member(300, True), Member(200, False)])
    assert {(o.arrived, o.expected) for o in outcomes} == {(3, 3)} and in_progress == 1


def test_an_incomplete_group_is_answered_without_a_value_and_late_members_at_once() -> None:
    async def scenario() -> tuple[list[Outcome], Outcome, float]:
        assembler = GroupAssembler(wait_s=0.2, component=kimi)
        early = await asyncio.gather(*(assembler.join("g", 4, Member(n, True)) for n in (10, 20)))
        started = time.monotonic()
        late = await assembler.join("g", 4, Member(30, True))
        return early, late, time.monotonic() - started

    early, late, late_wait = asyncio.run(scenario())
    assert [(o.value, o.arrived, o.expected) for o in early] == [(None, 2, 4)] * 2
    assert late.value is None and late_wait < 0.1


def test_a_member_whose_request_went_away_leaves_its_group() -> None:
    async def scenario() -> list[Outcome]:
        assembler = GroupAssembler(wait_s=30, component=kimi)
        gone = asyncio.ensure_future(assembler.join("g", 2, Member(999, True)))
        await asyncio.sleep(0.01)
        gone.cancel()
        await asyncio.sleep(0.01)
        return await asyncio.gather(*(assembler.join("g", 2, Member(n, True)) for n in (10, 20)))

    outcomes = asyncio.run(asyncio.wait_for(scenario(), 5))
    assert [o.value for o in outcomes] == [0.5, -0.5]  # over the two that stayed, not the one that left


# --- the service ----------------------------------------------------------------------------------------------------

RIGHT, WRONG = "\\boxed{4}", "\\boxed{5}"
# (completion, num_tokens): the group, whose kimi_length over all four is [0.5, -0.076, 0.0, -0.5]
GROUP = [
    (f"<think>short</think>{RIGHT}", 100),
    (f"<think>medium</think>{RIGHT}", 560),
    (f"<think>medium</think>{WRONG}", 300),
    (f"<think>long</think>{WRONG}", 600),
]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with LocalServer(tmp_path_factory.mktemp("groups"), REWARD_API_GROUP_WAIT_S="2") as server:
        yield server


def post(server: LocalServer, items: list[dict], profile: str = "kimi") -> list[dict]:
    response = httpx.post(f"{server.url}/v1/rewards", json={"items": items, "profile": profile}, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def item(index: int, group: str, group_size: int | None = None) -> dict:
    completion, tokens = GROUP[index]
    sized = {"group_size": group_size} if group_size is not None else {}
    return {"task": "math", "completion": completion, "reference": "4", "num_tokens": tokens, "group": group} | sized


def test_a_group_split_over_requests_gets_the_rewards_of_one_request(service: LocalServer) -> None:
    whole = post(service, [item(i, "whole") for i in range(4)])
    expected = kimi_length_rewards([t for _, t in GROUP], [True, True, False, False])
    assert [r["components"]["kimi_length"] for r in whole] == pytest.approx(expected)
    with ThreadPoolExecutor(4) as pool:  # four reward workers, one sample each, arriving apart
        futures = []
        for i in range(4):
            futures.append(pool.submit(post, service, [item(i, "split", group_size=4)]))
            time.sleep(0.1)
        split = [future.result()[0] for future in futures]
    assert [r["status"] for r in split] == ["ok"] * 4
    assert [r["components"]["kimi_length"] for r in split] == pytest.approx(expected)
    assert split[0]["details"]["group"] == {"members": 4, "expected": 4, "formed": "group_size"}


def test_the_first_sample_waits_only_for_the_last(service: LocalServer) -> None:
    with ThreadPoolExecutor(2) as pool:
        started = time.monotonic()
        first = pool.submit(post, service, [item(0, "prompt-7", group_size=2)])
        time.sleep(0.5)
        second = post(service, [item(1, "prompt-7", group_size=2)])
        waited = time.monotonic() - started
        assert first.result()[0]["status"] == second[0]["status"] == "ok"
    assert waited < 1.5  # well under group_wait_s (2 s): answered when the group completed


def test_an_incomplete_group_is_a_timeout_with_its_reason_not_a_zero(service: LocalServer) -> None:
    before = metric(service, "reward_group_items_total", outcome="incomplete")
    results = post(service, [item(i, "short-one", group_size=4) for i in range(3)])
    for result in results:
        assert result["status"] == "timeout", result
        assert "3 of its 4 samples" in result["details"]["reason"]
        assert result["details"]["group"] == {"members": 3, "expected": 4, "formed": "group_size"}
    late = post(service, [item(3, "short-one", group_size=4)])[0]
    assert late["status"] == "timeout"
    assert metric(service, "reward_group_items_total", outcome="incomplete") == before + 4


def test_without_group_size_the_group_is_the_request_and_says_so(service: LocalServer) -> None:
    results = post(service, [item(0, "alone")])
    assert results[0]["status"] == "ok" and results[0]["components"]["kimi_length"] == 0.0
    assert results[0]["details"]["group"] == {"members": 1, "expected": None, "formed": "request"}


def test_other_presets_do_not_wait_for_groups(service: LocalServer) -> None:
    started = time.monotonic()
    results = post(service, [item(0, "never-complete", group_size=8)], profile="r1")
    assert results[0]["status"] == "ok" and time.monotonic() - started < 1.5
