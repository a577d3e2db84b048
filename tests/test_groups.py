"""Group components over the whole group however the trainer splits it (reward_api/groups.py): the assembler alone,
then the real service with `kimi` over samples sent one request each, groups short of their size answered over the
samples that came within the wait (the service's or the request's), and groups without `group_size` formed from the
request, saying so."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from reward_api.graders.length import kimi_length_rewards
from reward_api.groups import GroupAssembler, Member, Outcome
from reward_api.local import LocalServer
from tests.scrape import metric

T = TypeVar("T")


def kimi(members: list[Member]) -> list[float]:
    return kimi_length_rewards([m.length for m in members], [m.correct for m in members])


def sample(length: int, correct: bool = True) -> Member:
    """A distinct sample of `length` tokens (its text named after its length)."""
    return Member(f"text-{length}-{correct}", length, correct)


def run(scenario: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(scenario, 10))


# --- the assembler alone ------------------------------------------------------------------------------------------


def test_a_group_completes_when_its_last_member_joins() -> None:
    async def scenario() -> tuple[list[Outcome], int]:
        assembler = GroupAssembler(wait_s=30, component=kimi)
        first = [asyncio.ensure_future(assembler.join("g", 3, sample(n))) for n in (100, 300)]
        other = asyncio.ensure_future(assembler.join("other", 2, sample(5)))
        await asyncio.sleep(0.05)
        assert not any(task.done() for task in first) and assembler.in_progress == 2
        last = await assembler.join("g", 3, sample(200, False))
        in_progress = assembler.in_progress
        other.cancel()  # that group never completes
        return [*(await asyncio.gather(*first)), last], in_progress

    outcomes, in_progress = run(scenario())
    assert [o.value for o in outcomes] == kimi([sample(100), sample(300), sample(200, False)])
    assert {(o.members, o.expected, o.formed) for o in outcomes} == {(3, 3, "group_size")} and in_progress == 1


def test_a_group_short_of_its_size_is_answered_over_the_members_that_came_and_late_ones_at_once() -> None:
    async def scenario() -> tuple[list[Outcome], Outcome, float]:
        assembler = GroupAssembler(wait_s=0.2, component=kimi)
        early = await asyncio.gather(*(assembler.join("g", 4, sample(n)) for n in (10, 20)))
        started = time.monotonic()
        late = await assembler.join("g", 4, sample(30))
        return early, late, time.monotonic() - started

    early, late, late_wait = run(scenario())
    assert [(o.value, o.members, o.expected, o.formed) for o in early] == [
        (0.5, 2, 4, "partial"),
        (-0.5, 2, 4, "partial"),
    ]
    assert (late.value, late.members, late.formed) == (-0.5, 3, "late") and late_wait < 0.1  # over 10, 20 and itself


def test_a_request_waits_no_longer_than_its_own_bound_and_its_sample_stays_in_the_group() -> None:
    async def scenario() -> tuple[Outcome, float, list[Outcome]]:
        assembler = GroupAssembler(wait_s=30, component=kimi)
        started = time.monotonic()
        impatient = await assembler.join("g", 3, sample(10), wait_s=0.1)
        waited = time.monotonic() - started
        rest = await asyncio.gather(*(assembler.join("g", 3, sample(n)) for n in (20, 30)))
        return impatient, waited, rest

    impatient, waited, rest = run(scenario())
    assert (impatient.value, impatient.members, impatient.formed) == (0.0, 1, "partial") and waited < 1
    assert [(o.value, o.members, o.formed) for o in rest] == [(0.0, 3, "group_size"), (-0.5, 3, "group_size")]


def test_a_disconnect_keeps_the_sample_and_the_clock_and_its_retry_is_not_a_second_member() -> None:
    async def scenario() -> tuple[list[Outcome], float]:
        assembler = GroupAssembler(wait_s=0.5, component=kimi)
        started = time.monotonic()
        gone = asyncio.ensure_future(assembler.join("g", 3, sample(10)))
        await asyncio.sleep(0.2)
        gone.cancel()  # OpenRLHF's or slime's client timed out
        await asyncio.sleep(0.1)
        retried = await asyncio.gather(assembler.join("g", 3, sample(10)), assembler.join("g", 3, sample(30)))
        return retried, time.monotonic() - started

    retried, waited = run(scenario())
    # Two distinct samples of three: answered when the group's first sample is 0.5 s old, not 0.5 s after the retry.
    assert [(o.value, o.members, o.formed) for o in retried] == [(0.5, 2, "partial"), (-0.5, 2, "partial")]
    assert waited < 0.75


def test_a_padding_copy_does_not_close_the_group_before_its_last_real_member() -> None:
    async def scenario() -> list[Outcome]:
        assembler = GroupAssembler(wait_s=30, component=kimi, copies_grace_s=5)
        joins = [asyncio.ensure_future(assembler.join("g", 3, sample(n))) for n in (10, 10, 20)]  # 10 twice: padding
        await asyncio.sleep(0.05)
        assert not any(join.done() for join in joins)
        return await asyncio.gather(*joins, assembler.join("g", 3, sample(40)))

    outcomes = run(scenario())
    whole = kimi([sample(10), sample(20), sample(40)])
    assert [o.value for o in outcomes] == [whole[0], whole[0], whole[1], whole[2]]
    assert {o.formed for o in outcomes} == {"group_size"}


def test_identical_samples_that_fill_the_group_wait_only_the_grace() -> None:
    async def scenario() -> tuple[list[Outcome], float]:
        assembler = GroupAssembler(wait_s=30, component=kimi, copies_grace_s=0.2)
        started = time.monotonic()
        outcomes = await asyncio.gather(*(assembler.join("g", 3, sample(n)) for n in (10, 10, 20)))
        return outcomes, time.monotonic() - started

    outcomes, waited = run(scenario())
    assert [(o.value, o.members, o.formed) for o in outcomes] == [(0.5, 3, "group_size")] * 2 + [
        (-0.5, 3, "group_size")
    ]
    assert waited < 5


def test_after_its_answer_a_copy_gets_its_twins_value_and_a_new_round_a_new_group() -> None:
    async def scenario() -> tuple[Outcome, list[Outcome], list[Outcome]]:
        assembler = GroupAssembler(wait_s=30, component=kimi)
        first = await asyncio.gather(*(assembler.join("g", 2, sample(n)) for n in (10, 20)))
        copy = await assembler.join("g", 2, sample(20))  # padding that came last
        again = await asyncio.gather(*(assembler.join("g", 2, sample(n)) for n in (5, 50)))  # the prompt, next step
        return copy, first, again

    copy, first, again = run(scenario())
    assert (copy.value, copy.formed) == (first[1].value, "group_size")
    assert [(o.value, o.members, o.formed) for o in again] == [(0.5, 2, "group_size"), (-0.5, 2, "group_size")]


@pytest.mark.parametrize("expected", [1, 4])
def test_groups_of_other_sizes_are_other_groups(expected: int) -> None:
    """Validation (n = 1) and training (n = 8) of one prompt share its key, not its group."""

    async def scenario() -> tuple[Outcome, float]:
        assembler = GroupAssembler(wait_s=30, component=kimi)
        training = [asyncio.ensure_future(assembler.join("g", 8, sample(n))) for n in range(8, 15)]
        await asyncio.sleep(0.01)
        started = time.monotonic()
        validation = await asyncio.gather(*(assembler.join("g", expected, sample(n)) for n in range(expected)))
        waited = time.monotonic() - started
        assert not any(join.done() for join in training)
        await assembler.join("g", 8, sample(100))
        await asyncio.gather(*training)
        return validation[0], waited

    validation, waited = run(scenario())
    assert (validation.members, validation.expected, validation.formed) == (expected, expected, "group_size")
    assert waited < 1


def test_samples_withdrawn_complete_their_group_over_the_others_at_once() -> None:
    """slime aborts a rollout's remaining samples: withdrawn, they are not waited for."""

    async def scenario() -> list[Outcome]:
        assembler = GroupAssembler(wait_s=30, component=kimi)
        graded = [asyncio.ensure_future(assembler.join("g", 4, sample(n))) for n in (10, 30)]
        await asyncio.sleep(0.05)
        assert not any(task.done() for task in graded)
        assembler.withdraw("g", 4, samples=2)
        return list(await asyncio.gather(*graded))

    graded = run(scenario())
    assert [(o.value, o.members, o.expected, o.formed) for o in graded] == [
        (0.5, 2, 4, "partial"),
        (-0.5, 2, 4, "partial"),
    ]


def test_a_withdrawal_counts_before_the_first_sample_and_not_after_the_answer() -> None:
    async def scenario() -> list[Outcome]:
        assembler = GroupAssembler(wait_s=30, component=kimi)
        assembler.withdraw("g", 3)
        first = await asyncio.gather(*(assembler.join("g", 3, sample(n)) for n in (10, 20)))  # 2 of 3: complete
        assembler.withdraw("g", 3)  # answered already: nothing changes
        assembler.withdraw("gone", 2, samples=2)  # a whole group withdrawn: nothing waits on it
        return [*first, await assembler.join("g", 3, sample(10))]  # a copy after the answer: its twin's value

    outcomes = run(scenario())
    assert [(o.value, o.members, o.formed) for o in outcomes] == [(0.5, 2, "partial"), (-0.5, 2, "partial"),
                                                                   (0.5, 2, "partial")]  # fmt: skip


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


def test_a_group_short_of_its_size_is_graded_over_the_samples_that_came_saying_so(service: LocalServer) -> None:
    before = metric(service, "reward_group_items_total", outcome="partial")
    results = post(service, [item(i, "short-one", group_size=4) for i in range(3)])
    expected = kimi_length_rewards([t for _, t in GROUP[:3]], [True, True, False])
    assert [r["status"] for r in results] == ["ok"] * 3
    assert [r["components"]["kimi_length"] for r in results] == pytest.approx(expected)
    assert {json.dumps(r["details"]["group"]) for r in results} == {
        json.dumps({"members": 3, "expected": 4, "formed": "partial"})
    }
    late = post(service, [item(3, "short-one", group_size=4)])[0]
    assert late["details"]["group"] == {"members": 4, "expected": 4, "formed": "late"}
    assert metric(service, "reward_group_items_total", outcome="partial") == before + 3


def test_a_request_bounds_its_own_wait_and_its_sample_still_counts(service: LocalServer) -> None:
    """A caller whose HTTP timeout is under the service's wait says so (`group_wait_s`): an answer in time."""
    started = time.monotonic()
    body = {"items": [item(0, "impatient", group_size=2)], "profile": "kimi", "group_wait_s": 0.3}
    first = httpx.post(f"{service.url}/v1/rewards", json=body, timeout=60).json()["results"][0]
    assert time.monotonic() - started < 1.5 and first["details"]["group"]["formed"] == "partial"
    second = post(service, [item(1, "impatient", group_size=2)])[0]
    assert second["details"]["group"] == {"members": 2, "expected": 2, "formed": "group_size"}
    assert second["components"]["kimi_length"] == pytest.approx(kimi_length_rewards([100, 560], [True, True])[1])


@pytest.mark.parametrize("endpoint", ["get_reward", "slime"])
def test_the_trainer_endpoints_take_the_wait_as_a_query_parameter(service: LocalServer, endpoint: str) -> None:
    body = (
        {"query": ["Q: 2+2? A: \\boxed{4}"], "prompts": ["Q: 2+2?"], "labels": ["4"]}
        if endpoint == "get_reward"
        else {"prompt": "Q: 2+2?", "response": "\\boxed{4}", "label": "4"}
    )
    started = time.monotonic()
    url = f"{service.url}/{endpoint}?profile=kimi&group_size=8&group_wait_s=0.3"
    response = httpx.post(url, json=body, timeout=60)
    assert response.status_code == 200, response.text
    assert time.monotonic() - started < 1.5
    bad = httpx.post(f"{service.url}/{endpoint}?group_wait_s=-1", json=body, timeout=60)
    assert bad.status_code == 422 and "group_wait_s" in bad.text


def test_requests_waiting_for_their_groups_do_not_fill_the_in_flight_cap(tmp_path: Path) -> None:
    """One request per sample, more samples waiting than the cap: the last of each group still gets in."""
    groups, size = 3, 3
    env = {"REWARD_API_MAX_REQUESTS_IN_FLIGHT": "2", "REWARD_API_GROUP_WAIT_S": "60"}
    with LocalServer(tmp_path, **env) as server, ThreadPoolExecutor(groups * size) as pool:
        started, futures = time.monotonic(), []
        for g in range(groups):
            for i in range(size):
                body = {"items": [item(i, f"g{g}", size)], "profile": "kimi"}
                futures.append(pool.submit(httpx.post, f"{server.url}/v1/rewards", json=body, timeout=60))
                time.sleep(0.3)  # one at a time: each is graded before the next, then waits for its group
        answers = [future.result() for future in futures]
    assert [a.status_code for a in answers] == [200] * (groups * size), [
        a.text for a in answers if a.status_code != 200
    ]
    assert {a.json()["results"][0]["details"]["group"]["formed"] for a in answers} == {"group_size"}
    assert time.monotonic() - started < 30  # no group waited out its 60 s


def test_a_withdrawal_naming_no_group_size_is_refused_naming_the_field(service: LocalServer) -> None:
    answer = httpx.post(f"{service.url}/v1/groups/withdraw", json={"groups": [{"group": "g"}]}, timeout=30)
    assert answer.status_code == 422 and "group_size" in answer.json()["error"], answer.text
    answer = httpx.post(
        f"{service.url}/v1/groups/withdraw",
        json={"groups": [{"group": "g", "group_size": 4, "samples": 2}]},
        timeout=30,
    )
    assert answer.status_code == 200 and answer.json() == {"withdrawn": 2}, answer.text
