"""Small programming problems with generated tests, as RL code data ships them.

Each problem has a submitted solution (source, as a model would write it), a reference
implementation in this process that computes the expected answers, and an input
generator. Stdio problems read stdin and print; call problems define a function (or a
`Solution` method) called with JSON arguments. Two submissions are subtly wrong, so a
grader that accepts everything is caught.
"""

from __future__ import annotations

import bisect
import math
import random
import textwrap
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.judge import CallTest, StdioTest
from sandbox.judge import TestSuite as Suite


@dataclass(frozen=True)
class Problem:
    name: str
    code: str
    reference: Callable[..., Any]  # stdio: input text -> output text; call: args -> result
    generate: Callable[[random.Random], Any]  # stdio: input text; call: list of arguments
    fn_name: str | None = None  # set for call problems

    def suite(self, rng: random.Random, count: int) -> Suite:
        if self.fn_name is None:
            inputs = [self.generate(rng) for _ in range(count)]
            return Suite(kind="stdio", tests=tuple(StdioTest(i, self.reference(i)) for i in inputs))
        args = [self.generate(rng) for _ in range(count)]
        return Suite(kind="call", fn_name=self.fn_name, tests=tuple(CallTest(a, self.reference(*a)) for a in args))


def problem(name: str, code: str, reference: Callable[..., Any], generate: Callable, fn_name: str | None = None):
    return Problem(name, textwrap.dedent(code).lstrip(), reference, generate, fn_name)


# --- input generators ---------------------------------------------------------------------


def _ints(rng: random.Random, n: int, lo: int = -1000, hi: int = 1000) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def _line(values: list[Any]) -> str:
    return " ".join(map(str, values))


def _words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice("abcde") for _ in range(rng.randint(1, 5))) for _ in range(n)]


def _list_input(rng: random.Random) -> str:
    values = _ints(rng, rng.randint(1, 60))
    return f"{len(values)}\n{_line(values)}\n"


def _palindromes_input(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(1, 10)):
        half = "".join(rng.choice("ab") for _ in range(rng.randint(1, 6)))
        lines.append(half + half[::-1] if rng.random() < 0.5 else half + "c")
    return "\n".join([str(len(lines)), *lines]) + "\n"


def _grid(rng: random.Random, top: int) -> list[list[int]]:
    cols = rng.randint(1, 8)
    return [_ints(rng, cols, 0, top) for _ in range(rng.randint(1, 8))]


def _anagram_args(rng: random.Random) -> list[str]:
    word = "".join(rng.choices("abc", k=rng.randint(1, 8)))
    other = "".join(rng.sample(word, len(word))) if rng.random() < 0.5 else "".join(rng.choices("abc", k=len(word)))
    return [word, other]


def _knapsack_args(rng: random.Random) -> list[Any]:
    n = rng.randint(1, 15)
    return [_ints(rng, n, 1, 20), _ints(rng, n, 1, 50), rng.randint(0, 60)]


def _two_sum_args(rng: random.Random) -> list[Any]:
    nums = rng.sample(range(-500, 500), rng.randint(2, 40))
    i, j = sorted(rng.sample(range(len(nums)), 2))
    return [nums, nums[i] + nums[j]]


def _brackets(rng: random.Random) -> list[str]:
    if rng.random() < 0.5:
        return ["".join(rng.choices("()[]{}", k=rng.randint(0, 12)))]
    text = ""
    for _ in range(rng.randint(0, 5)):
        opening, closing = rng.choice(["()", "[]", "{}"])
        text = opening + text + closing if rng.random() < 0.5 else text + opening + closing
    return [text]


# --- reference answers ----------------------------------------------------------------------


def _numbers(text: str) -> list[int]:
    return list(map(int, text.split()[1:]))


def _fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, (a + b) % 1_000_000_007
    return a


def _lis(values: list[int]) -> int:
    tails: list[int] = []
    for v in values:
        i = bisect.bisect_left(tails, v)
        tails[i : i + 1] = [v]
    return len(tails)


def _coins(text: str) -> str:
    amount, *coins = map(int, text.split())
    best = [0] + [math.inf] * amount
    for a in range(1, amount + 1):
        best[a] = min((best[a - c] + 1 for c in coins if c <= a), default=math.inf)
    return str(best[amount] if best[amount] != math.inf else -1)


def _kadane(values: list[int]) -> int:
    best = cur = values[0]
    for v in values[1:]:
        cur = max(v, cur + v)
        best = max(best, cur)
    return best


def _edit(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _balanced(s: str) -> bool:
    while any(pair in s for pair in ("()", "[]", "{}")):
        s = s.replace("()", "").replace("[]", "").replace("{}", "")
    return not s


def _run_length(s: str) -> str:
    runs: list[str] = []
    for ch in s:
        if runs and runs[-1][0] == ch:
            runs[-1] += ch
        else:
            runs.append(ch)
    return "".join(f"{len(run)}{run[0]}" for run in runs)


def _merge(intervals: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def _stairs(n: int) -> int:
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def _knapsack(weights: list[int], values: list[int], cap: int) -> int:
    best = [0] * (cap + 1)
    for w, v in zip(weights, values, strict=True):
        for c in range(cap, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[cap]


def _islands(grid: list[list[int]]) -> int:
    seen, count = set(), 0
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            if value and (r, c) not in seen:
                count, stack = count + 1, [(r, c)]
                while stack:
                    y, x = stack.pop()
                    if (y, x) in seen or not (0 <= y < len(grid) and 0 <= x < len(row)) or not grid[y][x]:
                        continue
                    seen.add((y, x))
                    stack += [(y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)]
    return count


def _two_sum(nums: list[int], target: int) -> list[int]:
    seen: dict[int, int] = {}
    for j, n in enumerate(nums):
        if target - n in seen:
            return [seen[target - n], j]
        seen[n] = j
    return []


def _top_k(nums: list[int], k: int) -> list[int]:
    return [v for v, _ in sorted(Counter(nums).items(), key=lambda p: (-p[1], p[0]))[:k]]


# --- the problems ---------------------------------------------------------------------------

STDIO = [
    problem(
        "sum_pair",
        """
        a, b = map(int, input().split())
        print(a + b)
        """,
        lambda t: str(sum(map(int, t.split()))),
        lambda r: f"{r.randint(-(10**9), 10**9)} {r.randint(-(10**9), 10**9)}\n",
    ),
    problem(
        "sum_list",
        """
        import sys
        data = sys.stdin.read().split()
        print(sum(map(int, data[1:])))
        """,
        lambda t: str(sum(_numbers(t))),
        _list_input,
    ),
    problem(
        "sort_numbers",
        """
        n = int(input())
        nums = sorted(map(int, input().split()))
        print(' '.join(map(str, nums)))
        """,
        lambda t: _line(sorted(_numbers(t))),
        _list_input,
    ),
    problem(
        "reverse_words",
        """
        print(' '.join(reversed(input().split())))
        """,
        lambda t: _line(t.split()[::-1]),
        lambda r: _line(_words(r, r.randint(1, 20))) + "\n",
    ),
    problem(
        "count_vowels",
        """
        s = input()
        print(sum(ch in 'aeiou' for ch in s))
        """,
        lambda t: str(sum(ch in "aeiou" for ch in t)),
        lambda r: _line(_words(r, r.randint(1, 30))) + "\n",
    ),
    problem(
        "fibonacci_mod",
        """
        n = int(input())
        a, b = 0, 1
        for _ in range(n):
            a, b = b, (a + b) % 1000000007
        print(a)
        """,
        lambda t: str(_fib(int(t))),
        lambda r: f"{r.randint(0, 5000)}\n",
    ),
    problem(
        "longest_increasing_subsequence",
        """
        import bisect
        n = int(input())
        tails = []
        for v in map(int, input().split()):
            i = bisect.bisect_left(tails, v)
            if i == len(tails):
                tails.append(v)
            else:
                tails[i] = v
        print(len(tails))
        """,
        lambda t: str(_lis(_numbers(t))),
        _list_input,
    ),
    problem(  # wrong: prints 0 instead of -1 when the amount cannot be made
        "coin_change",
        """
        amount, *coins = map(int, input().split())
        INF = float('inf')
        dp = [0] + [INF] * amount
        for a in range(1, amount + 1):
            for c in coins:
                if c <= a and dp[a - c] + 1 < dp[a]:
                    dp[a] = dp[a - c] + 1
        print(dp[amount] if dp[amount] != INF else 0)
        """,
        _coins,
        lambda r: _line([r.randint(1, 300), *r.sample(range(2, 40), r.randint(1, 4))]) + "\n",
    ),
    problem(
        "gcd_lcm",
        """
        import math
        a, b = map(int, input().split())
        g = math.gcd(a, b)
        print(g, a * b // g)
        """,
        lambda t: _line([math.gcd(*map(int, t.split())), math.lcm(*map(int, t.split()))]),
        lambda r: f"{r.randint(1, 10**6)} {r.randint(1, 10**6)}\n",
    ),
    problem(
        "count_primes",
        """
        n = int(input())
        sieve = bytearray([1]) * (n + 1)
        sieve[:2] = bytes(min(2, n + 1))
        for i in range(2, int(n ** 0.5) + 1):
            if sieve[i]:
                sieve[i * i :: i] = bytes(len(range(i * i, n + 1, i)))
        print(sum(sieve))
        """,
        lambda t: str(sum(all(k % d for d in range(2, math.isqrt(k) + 1)) for k in range(2, int(t) + 1))),
        lambda r: f"{r.randint(0, 3000)}\n",
    ),
    problem(
        "max_subarray",
        """
        n = int(input())
        best = cur = None
        for v in map(int, input().split()):
            cur = v if cur is None or cur < 0 else cur + v
            best = cur if best is None else max(best, cur)
        print(best)
        """,
        lambda t: str(_kadane(_numbers(t))),
        _list_input,
    ),
    problem(
        "grid_paths",
        """
        r, c = map(int, input().split())
        row = [1] * c
        for _ in range(r - 1):
            for j in range(1, c):
                row[j] = (row[j] + row[j - 1]) % 1000000007
        print(row[-1])
        """,
        lambda t: str(math.comb(sum(map(int, t.split())) - 2, int(t.split()[0]) - 1) % 1_000_000_007),
        lambda r: f"{r.randint(1, 60)} {r.randint(1, 60)}\n",
    ),
    problem(
        "palindromes",
        """
        t = int(input())
        for _ in range(t):
            s = input().strip()
            print('YES' if s == s[::-1] else 'NO')
        """,
        lambda t: "\n".join("YES" if s == s[::-1] else "NO" for s in t.split()[1:]),
        _palindromes_input,
    ),
]

CALL = [
    problem(
        "two_sum",
        """
        class Solution:
            def twoSum(self, nums, target):
                seen = {}
                for j, n in enumerate(nums):
                    if target - n in seen:
                        return [seen[target - n], j]
                    seen[n] = j
        """,
        _two_sum,
        _two_sum_args,
        "twoSum",
    ),
    problem(
        "is_anagram",
        """
        from collections import Counter
        def is_anagram(s, t):
            return Counter(s) == Counter(t)
        """,
        lambda s, t: sorted(s) == sorted(t),
        _anagram_args,
        "is_anagram",
    ),
    problem(
        "edit_distance",
        """
        def edit_distance(a, b):
            dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
            for i in range(len(a) + 1):
                for j in range(len(b) + 1):
                    if i == 0 or j == 0:
                        dp[i][j] = i + j
                    else:
                        dp[i][j] = min(dp[i-1][j] + 1, dp[i][j-1] + 1, dp[i-1][j-1] + (a[i-1] != b[j-1]))
            return dp[-1][-1]
        """,
        _edit,
        lambda r: ["".join(r.choices("abcd", k=r.randint(0, 25))) for _ in range(2)],
        "edit_distance",
    ),
    problem(  # wrong: never looks at the last candidate
        "binary_search",
        """
        def search(nums, target):
            lo, hi = 0, len(nums) - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if nums[mid] == target:
                    return mid
                if nums[mid] < target:
                    lo = mid + 1
                else:
                    hi = mid - 1
            return -1
        """,
        lambda nums, target: nums.index(target) if target in nums else -1,
        lambda r: [sorted(r.sample(range(100), r.randint(1, 30))), r.randint(0, 99)],
        "search",
    ),
    problem(
        "balanced_brackets",
        """
        def balanced(s):
            pairs = {')': '(', ']': '[', '}': '{'}
            stack = []
            for ch in s:
                if ch in pairs:
                    if not stack or stack.pop() != pairs[ch]:
                        return False
                else:
                    stack.append(ch)
            return not stack
        """,
        _balanced,
        _brackets,
        "balanced",
    ),
    problem(
        "run_length",
        """
        from itertools import groupby
        def encode(s):
            return ''.join(f'{len(list(g))}{ch}' for ch, g in groupby(s))
        """,
        _run_length,
        lambda r: ["".join(r.choice("aab") * r.randint(1, 4) for _ in range(r.randint(0, 10)))],
        "encode",
    ),
    problem(
        "merge_intervals",
        """
        def merge(intervals):
            out = []
            for lo, hi in sorted(intervals):
                if out and lo <= out[-1][1]:
                    out[-1][1] = max(out[-1][1], hi)
                else:
                    out.append([lo, hi])
            return out
        """,
        _merge,
        lambda r: [[[a, a + r.randint(0, 10)] for a in _ints(r, r.randint(1, 15), 0, 60)]],
        "merge",
    ),
    problem(
        "climb_stairs",
        """
        from functools import lru_cache
        @lru_cache(None)
        def climb(n):
            return 1 if n <= 1 else climb(n - 1) + climb(n - 2)
        """,
        _stairs,
        lambda r: [r.randint(0, 80)],
        "climb",
    ),
    problem(
        "rotate_matrix",
        """
        def rotate(m):
            return [list(row) for row in zip(*m[::-1])]
        """,
        lambda m: [list(row) for row in zip(*m[::-1], strict=True)],
        lambda r: [_grid(r, 9)],
        "rotate",
    ),
    problem(
        "top_k_frequent",
        """
        from collections import Counter
        def top_k(nums, k):
            return [v for v, _ in sorted(Counter(nums).items(), key=lambda p: (-p[1], p[0]))[:k]]
        """,
        _top_k,
        lambda r: [_ints(r, r.randint(1, 40), 0, 9), r.randint(1, 4)],
        "top_k",
    ),
    problem(
        "knapsack",
        """
        def knapsack(weights, values, cap):
            best = [0] * (cap + 1)
            for w, v in zip(weights, values):
                for c in range(cap, w - 1, -1):
                    best[c] = max(best[c], best[c - w] + v)
            return best[cap]
        """,
        _knapsack,
        _knapsack_args,
        "knapsack",
    ),
    problem(
        "count_islands",
        """
        def islands(grid):
            rows, cols = len(grid), len(grid[0])
            seen = set()
            def fill(r, c):
                if not (0 <= r < rows and 0 <= c < cols) or (r, c) in seen or not grid[r][c]:
                    return
                seen.add((r, c))
                for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    fill(r + dr, c + dc)
            count = 0
            for r in range(rows):
                for c in range(cols):
                    if grid[r][c] and (r, c) not in seen:
                        count += 1
                        fill(r, c)
            return count
        """,
        _islands,
        lambda r: [_grid(r, 1)],
        "islands",
    ),
    problem(
        "product_except_self",
        """
        def product_except_self(nums):
            n = len(nums)
            out = [1] * n
            left = 1
            for i in range(n):
                out[i] = left
                left *= nums[i]
            right = 1
            for i in reversed(range(n)):
                out[i] *= right
                right *= nums[i]
            return out
        """,
        lambda nums: [math.prod(nums[:i] + nums[i + 1 :]) for i in range(len(nums))],
        lambda r: [_ints(r, r.randint(1, 12), -5, 5)],
        "product_except_self",
    ),
]

PROBLEMS = STDIO + CALL


def make_suites(tests_per_problem: int = 10, seed: int = 0) -> list[tuple[Problem, Suite]]:
    rng = random.Random(seed)
    return [(p, p.suite(rng, tests_per_problem)) for p in PROBLEMS]
