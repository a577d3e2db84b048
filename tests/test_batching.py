"""BatchingClient: per-sample calls from many threads and event loops become few batched requests."""

from __future__ import annotations

import asyncio
import dataclasses
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from reward_api.local import LocalServer, free_port
from tests.test_reward_client import expected_rewards, math_items, request_count
from trainer_client.batching import BatchingClient, ServiceSettings, _chunks_keeping_groups, shared_client
from trainer_client.client import RewardServiceError


def test_settings_resolve_from_arguments_then_environment_then_defaults() -> None:
    env = {"REWARD_SERVICE_URL": "http://a:1, http://b:2/", "REWARD_SERVICE_PROFILE": "r1"}
    from_env = ServiceSettings.resolve(environ=env | {"REWARD_SERVICE_MAX_CONCURRENCY": "8"})
    assert (from_env.urls, from_env.profile, from_env.max_concurrency) == (("http://a:1", "http://b:2"), "r1", 8)
    given = ServiceSettings.resolve(urls=["http://c:3"], profile={"name": "dapo"}, token="t", environ=env)
    assert (given.urls, given.token, given.profile_value()) == (("http://c:3",), "t", {"name": "dapo"})
    default = ServiceSettings.resolve(environ={})
    assert (default.urls, default.profile, default.max_concurrency) == (("http://127.0.0.1:8000",), None, 64)
    assert pickle.loads(pickle.dumps(given)) == given


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"urls": " , "}, "no URL"), ({"group_size": 0}, "group_size=0"), ({"max_concurrency": -1}, ">= 1")],
)
def test_settings_reject_what_cannot_work(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ServiceSettings.resolve(environ={}, **kwargs)


def test_per_sample_calls_from_64_threads_go_out_in_a_few_requests(server: LocalServer) -> None:
    client = BatchingClient(ServiceSettings.resolve(urls=server.url, window_s=0.02, environ={}))
    items = math_items(64)
    before = request_count(server)
    with ThreadPoolExecutor(64) as threads:
        results = list(threads.map(lambda item: client.grade_sync([item])[0], items))
    sent = request_count(server) - before
    client.close()
    assert [r.id for r in results] == list(range(64))
    assert [r.reward for r in results] == expected_rewards(64)
    assert 1 <= sent <= 8, f"{sent} requests for 64 per-sample calls"


def test_coroutines_on_different_event_loops_share_one_client(server: LocalServer) -> None:
    client = shared_client(ServiceSettings.resolve(urls=server.url, environ={}))
    assert shared_client(ServiceSettings.resolve(urls=server.url, environ={})) is client
    rewards: dict[int, list[float]] = {}

    def on_own_loop(offset: int) -> None:
        async def grade() -> list[float]:
            results = await asyncio.gather(*(client.grade_one(item) for item in math_items(6, offset)))
            return [r.reward for r in results]

        rewards[offset] = asyncio.run(grade())

    threads = [threading.Thread(target=on_own_loop, args=(offset,)) for offset in (0, 6, 12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert rewards == {offset: expected_rewards(6, offset) for offset in (0, 6, 12)}


def test_a_group_split_over_workers_and_replicas_gets_its_group_rewards(server: LocalServer, tmp_path) -> None:
    """Kimi's length reward needs the whole group; its samples arrive one by one, at two reward workers (two
    clients), with two replicas: each client sends a sample at once with its group's size to the group's home
    replica, which completes the group."""
    lengths = [10, 20, 30, 40]
    items = [
        {"id": i, "task": "math", "completion": "\\boxed{4}", "reference": "4", "group": "g", "num_tokens": n}
        for i, n in enumerate(lengths)
    ]

    def one_by_one(settings: ServiceSettings) -> list[float]:
        workers = [BatchingClient(settings), BatchingClient(settings)]
        futures = []
        for index, item in enumerate(items):
            futures.append(workers[index % 2].submit(item))
            time.sleep(0.05)  # far longer than the window: one request each
        values = [f.result(timeout=30).components["kimi_length"] for f in futures]
        for worker in workers:
            worker.close()
        return values

    with LocalServer(tmp_path) as second:
        urls = [server.url, second.url]
        base = ServiceSettings.resolve(urls=urls, profile="kimi", window_s=0.005, environ={})
        grouped = ServiceSettings.resolve(urls=urls, profile="kimi", window_s=0.005, group_size=4, environ={})
        assert one_by_one(base) == [0.0, 0.0, 0.0, 0.0]  # each alone: max_len == min_len
        assert one_by_one(grouped) == pytest.approx([0.5, 0.5 - 1 / 3, 0.5 - 2 / 3, -0.5])


def test_an_unreachable_service_raises_for_every_caller_instead_of_a_zero() -> None:
    settings = ServiceSettings.resolve(urls=f"http://127.0.0.1:{free_port()}", environ={})
    client = BatchingClient(dataclasses.replace(settings, retries=1))
    futures = [client.submit(item) for item in math_items(3)]
    for future in futures:
        with pytest.raises(RewardServiceError, match="no reward service answered"):
            future.result(timeout=30)
    client.close()


def test_a_token_reaches_a_secured_service(tmp_path) -> None:
    with LocalServer(tmp_path, REWARD_API_WORKERS="1", REWARD_API_AUTH_TOKEN="s3cret") as secured:
        with_token = BatchingClient(ServiceSettings.resolve(urls=secured.url, token="s3cret", environ={}))
        assert [r.reward for r in with_token.grade_sync(math_items(3, offset=1))] == expected_rewards(3, offset=1)
        with_token.close()
        without = BatchingClient(ServiceSettings.resolve(urls=secured.url, environ={}))
        with pytest.raises(RewardServiceError, match="401"):
            without.grade_sync(math_items(1))
        without.close()


@pytest.mark.parametrize(
    ("groups", "size", "chunks"),
    [
        ([None] * 5, 2, [[None] * 2, [None] * 2, [None]]),
        (["a", "a", "a", "b", "b"], 2, [["a", "a", "a"], ["b", "b"]]),  # a group is never cut
        (["a", "b", "b", "b", "c"], 2, [["a", "b", "b", "b"], ["c"]]),
        (["a", None, None], 1, [["a"], [None], [None]]),
    ],
)
def test_requests_end_only_where_a_group_ends(groups: list, size: int, chunks: list) -> None:
    batch = [({"group": group}, None) for group in groups]
    split = [[item["group"] for item, _ in chunk] for chunk in _chunks_keeping_groups(batch, size)]
    assert split == chunks
