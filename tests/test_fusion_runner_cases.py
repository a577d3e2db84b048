"""SandboxFusion's own runner tests, ported to our `/run_code` and `/run_jupyter` and run through its client.

Each row is one test of SandboxFusion's `sandbox/tests/runners/test_*.py`: the requests it sends (its programs byte
for byte, language, stdin and timeouts as it sends them) through SandboxFusion's PyPI client `sandbox-fusion`, and the
assertions it makes on each answer (`status`; `compile_result`'s status and return code; `run_result`'s presence,
status, stdout and stderr; a notebook's cells), translated one for one. So a program that passes, fails, times out or
does not compile in SandboxFusion's tests gets the same verdict here, in every language we run. Every one of its
runner tests is accounted for exactly once: a row here, a test of ours that already makes its assertions
(COVERED_ELSEWHERE), a language nothing here runs (NOT_OUR_LANGUAGES), or a difference the README documents (DIFFERS).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sandbox_fusion import RunCodeRequest, RunJupyterRequest, run_code, run_jupyter
from sandbox_fusion.models import CellRunResult, RunCodeResponse

from reward_api.local import LocalServer
from sandbox.languages import CANNOT_RUN

# Every `def test_` in SandboxFusion's sandbox/tests/runners/test_*.py at commit
# 469de0845cb7d665bc68044d541aa3aa28c5b30a (github.com/bytedance/SandboxFusion), as "file::test".
FUSION_RUNNER_TESTS = (
    "test_bash.py::test_bash_echo",
    "test_bash.py::test_bash_sleep_timeout",
    "test_bash.py::test_bash_false_condition",
    "test_bash.py::test_bash_syntax_error",
    "test_bash.py::test_bash_file_read",
    "test_bash.py::test_bash_stdin",
    "test_cpp.py::test_cpp_print",
    "test_cpp.py::test_cpp_timeout",
    "test_cpp.py::test_cpp_assertion_error",
    "test_cpp.py::test_cpp_compile_error",
    "test_cpp.py::test_cpp_stdin",
    "test_cpp.py::test_cpp_pthread",
    "test_csharp.py::test_csharp_print",
    "test_csharp.py::test_csharp_timeout",
    "test_csharp.py::test_csharp_assertion_error",
    "test_csharp.py::test_csharp_stdin",
    "test_cuda.py::test_cuda_basic",
    "test_d_ut.py::test_D_ut_print",
    "test_d_ut.py::test_D_ut_timeout",
    "test_d_ut.py::test_D_ut_assertion_success",
    "test_d_ut.py::test_D_ut_assertion_error",
    "test_go.py::test_golang_print",
    "test_go.py::test_golang_timeout",
    "test_go.py::test_golang_stdin",
    "test_go_test.py::test_golang_test_pass",
    "test_go_test.py::test_golang_test_fail",
    "test_go_test.py::test_golang_test_timeout",
    "test_isolation.py::test_isolation_network_server_127",
    "test_isolation.py::test_isolation_network_server_localhost",
    "test_isolation.py::test_isolation_network_server_port_conflict",
    "test_isolation.py::test_isolation_network_external_access",
    "test_java.py::test_java_print",
    "test_java.py::test_java_compile_error",
    "test_java.py::test_java_timeout",
    "test_java.py::test_java_assertion_error",
    "test_java.py::test_java_assert",
    "test_java.py::test_java_external_jar",
    "test_java.py::test_java_stdin",
    "test_jest.py::test_jest_pass",
    "test_jest.py::test_jest_fail",
    "test_julia.py::test_julia_print",
    "test_julia.py::test_julia_timeout",
    "test_julia.py::test_julia_assertion_success",
    "test_julia.py::test_julia_assertion_error",
    "test_junit.py::test_junit_pass",
    "test_junit.py::test_junit_fail",
    "test_jupyter.py::test_jupyter_print",
    "test_jupyter.py::test_jupyter_multi_cell",
    "test_jupyter.py::test_jupyter_multi_cell_raise",
    "test_jupyter.py::test_jupyter_plot",
    "test_kotlin_script.py::test_kotlin_script_print",
    "test_kotlin_script.py::test_kotlin_script_timeout",
    "test_kotlin_script.py::test_kotlin_script_assertion_success",
    "test_kotlin_script.py::test_kotlin_script_assertion_error",
    "test_lean.py::test_lean_pass",
    "test_lean.py::test_lean_error",
    "test_lua.py::test_lua_print",
    "test_lua.py::test_lua_timeout",
    "test_lua.py::test_lua_assertion_success",
    "test_lua.py::test_lua_assertion_error",
    "test_nodejs.py::test_nodejs_print",
    "test_nodejs.py::test_nodejs_timeout",
    "test_nodejs.py::test_nodejs_assertion_error",
    "test_nodejs.py::test_nodejs_humanevalx_assertion_error",
    "test_nodejs.py::test_nodejs_lodash_dep",
    "test_nodejs.py::test_nodejs_stdin",
    "test_perl.py::test_perl_print",
    "test_perl.py::test_perl_timeout",
    "test_perl.py::test_perl_assertion_success",
    "test_perl.py::test_perl_assertion_error",
    "test_php.py::test_php_print",
    "test_php.py::test_php_timeout",
    "test_php.py::test_php_error",
    "test_php.py::test_php_stdin",
    "test_pytest.py::test_pytest_pass",
    "test_pytest.py::test_pytest_fail",
    "test_python.py::test_python_print",
    "test_python.py::test_python_timeout",
    "test_python.py::test_python_assertion_error",
    "test_python.py::test_python_syntax_error",
    "test_python.py::test_python_file_read",
    "test_python.py::test_python_stdin",
    "test_python.py::test_python_fetch_files",
    "test_python_gpu.py::test_python_gpu_basic",
    "test_r.py::test_r_print",
    "test_r.py::test_r_timeout",
    "test_r.py::test_r_assertion_success",
    "test_r.py::test_r_assertion_error",
    "test_racket.py::test_racket_print",
    "test_racket.py::test_racket_timeout",
    "test_racket.py::test_racket_assertion_success",
    "test_ruby.py::test_ruby_print",
    "test_ruby.py::test_ruby_timeout",
    "test_ruby.py::test_ruby_assertion_success",
    "test_ruby.py::test_ruby_assertion_error",
    "test_rust.py::test_rust_print",
    "test_rust.py::test_rust_timeout",
    "test_rust.py::test_rust_assertion_error",
    "test_rust.py::test_rust_compile_error",
    "test_rust.py::test_rust_stdin",
    "test_scala.py::test_scala_print",
    "test_scala.py::test_scala_timeout",
    "test_scala.py::test_scala_assertion_success",
    "test_scala.py::test_scala_assertion_error",
    "test_swift.py::test_swift_print",
    "test_swift.py::test_swift_timeout",
    "test_swift.py::test_swift_assertion_success",
    "test_swift.py::test_swift_assertion_error",
    "test_swift.py::test_swift_compile_error",
    "test_typescript.py::test_typescript_print",
    "test_typescript.py::test_typescript_timeout",
    "test_typescript.py::test_typescript_assertion_error",
    "test_typescript.py::test_typescript_humanevalx_assertion_error",
    "test_typescript.py::test_typescript_lodash_dep",
    "test_typescript.py::test_typescript_stdin",
    "test_verilog.py::test_verilog_basic",
)

# Tests whose assertions another test of ours already makes through the same client.
COVERED_ELSEWHERE = {
    # A file three directories deep (its secret_flag path) read by Python and by Bash.
    "test_python.py::test_python_file_read": "tests/test_fusion_files.py::test_a_program_reads_the_files_it_was_given",
    "test_bash.py::test_bash_file_read": "tests/test_fusion_files.py::test_a_program_reads_the_files_it_was_given",
    # `print(123)`; `a = ...`, `a` displayed as its repr, `print(a)`: its example cells, with 123 for "hello".
    "test_jupyter.py::test_jupyter_print": "tests/test_fusion_jupyter.py::test_sandbox_fusions_example_cells",
    "test_jupyter.py::test_jupyter_multi_cell": "tests/test_fusion_jupyter.py::test_sandbox_fusions_example_cells",
    # Its plot cells verbatim, its assertion, and what the figure's display holds.
    "test_jupyter.py::test_jupyter_plot": (
        "tests/test_fusion_jupyter.py::test_sandbox_fusions_plot_cell_shows_its_figure"
    ),
}

# Tests of languages no toolchain here runs; a request for one gets this reason as its SandboxError.
NOT_OUR_LANGUAGES = {
    "test_cuda.py::test_cuda_basic": CANNOT_RUN["cuda"],
    "test_julia.py::test_julia_print": CANNOT_RUN["julia"],
    "test_julia.py::test_julia_timeout": CANNOT_RUN["julia"],
    "test_julia.py::test_julia_assertion_success": CANNOT_RUN["julia"],
    "test_julia.py::test_julia_assertion_error": CANNOT_RUN["julia"],
    "test_lean.py::test_lean_pass": CANNOT_RUN["lean"],
    "test_lean.py::test_lean_error": CANNOT_RUN["lean"],
    "test_python_gpu.py::test_python_gpu_basic": CANNOT_RUN["python_gpu"],
    "test_swift.py::test_swift_print": CANNOT_RUN["swift"],
    "test_swift.py::test_swift_timeout": CANNOT_RUN["swift"],
    "test_swift.py::test_swift_assertion_success": CANNOT_RUN["swift"],
    "test_swift.py::test_swift_assertion_error": CANNOT_RUN["swift"],
    "test_swift.py::test_swift_compile_error": CANNOT_RUN["swift"],
}

# Tests of a SandboxFusion behaviour we deliberately do not share, as the README says.
_START_UP = "finishes: a test here gets its runtime's start-up on top of run_timeout (README, Languages: "
DIFFERS = {
    "test_python.py::test_python_fetch_files": (
        "it writes and fetches `/mnt/b`: a path here is relative to the program's directory or absolute under "
        "/sandbox or /tmp (README, SandboxFusion and verl; sandbox/files.py), so that request is a 422 naming "
        "`/mnt/b`; fetching a relative path is tests/test_fusion_files.py's"
    ),
    "test_isolation.py::test_isolation_network_external_access": (
        "it fetches https://www.sina.com.cn: a program here has no network at all (README, Isolation)"
    ),
    "test_csharp.py::test_csharp_timeout": "Thread.Sleep(200) under run_timeout=0.1 " + _START_UP + "Mono, +0.2 s)",
    "test_r.py::test_r_timeout": "Sys.sleep(5) under run_timeout=5 " + _START_UP + "R, +0.5 s)",
    "test_scala.py::test_scala_timeout": "Thread.sleep(5000) under run_timeout=5 " + _START_UP + "the JVM, +0.5 s)",
    "test_kotlin_script.py::test_kotlin_script_timeout": (
        "Thread.sleep(2000) under run_timeout=1 " + _START_UP + "kotlinc -script compiles it on every run, +5 s)"
    ),
}


@dataclass(frozen=True)
class Expect:
    """SandboxFusion's assertions on one `/run_code` answer; a field left at its default asserts nothing."""

    status: str  # RunStatus: Success or Failed
    run: str | None = None  # run_result.status: Finished or TimeLimitExceeded
    compiled: bool = False  # compile_result.status == Finished
    compile_error: bool = False  # compile_result Finished with a non-zero return code, and no run_result
    stdout: str | None = None  # run_result.stdout == this
    stdout_stripped: str | None = None  # run_result.stdout.strip() == this
    in_stdout: str | None = None
    in_stderr: str | None = None
    in_output: str | None = None  # in run_result.stderr + run_result.stdout


Request = Mapping[str, Any]  # RunCodeRequest's arguments, as the test passes them


@dataclass(frozen=True)
class Case:
    name: str  # SandboxFusion's "file::test"
    request: Request
    expect: Expect
    then: tuple[tuple[Request, Expect], ...] = ()  # the test's further requests, in order
    at_once: int = 1  # copies of each request sent concurrently


@dataclass(frozen=True)
class CellExpect:
    """SandboxFusion's assertions on one cell of a `/run_jupyter` answer."""

    index: int
    stdout: str | None = None
    stderr: str | None = None
    error_name: str | None = None  # error[0]["ename"]


@dataclass(frozen=True)
class Notebook:
    name: str
    cells: tuple[str, ...]
    expect: tuple[CellExpect, ...]


def fusion_twin(program: str, *changes: tuple[str, str]) -> str:
    """SandboxFusion's failing program where it is its passing one with a few lines changed (each found once)."""
    for old, new in changes:
        assert program.count(old) == 1, old
        program = program.replace(old, new)
    return program


# The longer programs of the rows below, each named after its test.
CPP_PTHREAD = """
#include <memory>
#include <queue>
#include <mutex>
#include <condition_variable>
#include <iostream>
#include <thread>
#include <vector>
#include <optional>

template<typename T>
class ThreadSafeQueue {
public:
    ThreadSafeQueue() = default;

    template<class U>
    auto push(U&& val) -> std::enable_if_t<std::is_same<T, typename std::decay<U>::type>::value> {
        std::unique_lock<std::mutex> lock(mutex_);
        queue_.push(std::forward<U>(val));
        cv_.notify_one();
    }

    std::optional<T> pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this]() { return !queue_.empty(); });
        T value = std::move(queue_.front());
        queue_.pop();
        return value;
    }

    bool empty() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return queue_.empty();
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::queue<T> queue_;
};



void producer(ThreadSafeQueue<int>& queue, int id) {
    for (int i = 0; i < 3; ++i) {
        std::cout << "Producer " << id << " pushing " << i << std::endl;
        queue.push(i);
    }
}

void producer_move(ThreadSafeQueue<std::unique_ptr<int>>& queue, int id) {
    for (int i = 0; i < 3; ++i) {
        std::cout << "Producer " << id << " pushing " << i << std::endl;
        queue.push(std::move(std::make_unique<int>(i)));
    }
}

void consumer(ThreadSafeQueue<int>& queue, int id) {
    for (int i = 0; i < 3; ++i) {
        auto value = queue.pop();
        std::cout << "Consumer " << id << " popped " << *value << std::endl;
    }
}

void consumer_move(ThreadSafeQueue<std::unique_ptr<int>>& queue, int id) {
    for (int i = 0; i < 3; ++i) {
        auto value = queue.pop();
        std::cout << "Consumer " << id << " popped " << *(*value) << std::endl;
    }
}

int main() {
    {
        ThreadSafeQueue<int> queue;

        std::thread producer1(producer, std::ref(queue), 1);
        std::thread producer2(producer, std::ref(queue), 2);
        std::thread consumer1(consumer, std::ref(queue), 1);
        std::thread consumer2(consumer, std::ref(queue), 2);

        producer1.join();
        producer2.join();
        consumer1.join();
        consumer2.join();
    }

    {
        ThreadSafeQueue<std::unique_ptr<int>> queue;

        std::thread producer1(producer_move, std::ref(queue), 1);
        std::thread producer2(producer_move, std::ref(queue), 2);
        std::thread consumer1(consumer_move, std::ref(queue), 1);
        std::thread consumer2(consumer_move, std::ref(queue), 2);

        producer1.join();
        producer2.join();
        consumer1.join();
        consumer2.join();
    }


    return 0;
}
    """


D_UT_PRINT = """
import std.stdio; 
 
void main(string[] args) { 
   writeln("Hello, World!"); 
}
    """  # noqa: W291, W293 (SandboxFusion's code, as it is)


GO_TEST_PASS = """
    package main

    import (
        "math"
        "testing"
        "github.com/stretchr/testify/assert"
    )

    // Check if in given list of numbers, are any two numbers closer to each other than given threshold.
    // >>> HasCloseElements([]float64{1.0, 2.0, 3.0}, 0.5)
    // false
    // >>> HasCloseElements([]float64{1.0, 2.8, 3.0, 4.0, 5.0, 2.0}, 0.3)
    // true
    func HasCloseElements(numbers []float64, threshold float64) bool {
        for i := 0; i < len(numbers); i++ {
            for j := i + 1; j < len(numbers); j++ {
                var distance float64 = math.Abs(numbers[i] - numbers[j])
                if distance < threshold {
                    return true
                }
            }
        }
        return false
    }

    func TestHasCloseElements(t *testing.T) {
        assert := assert.New(t)
        assert.Equal(false, HasCloseElements([]float64{1.0, 2.0, 3.0}, 0.5))
        assert.Equal(true, HasCloseElements([]float64{1.0, 2.8, 3.0, 4.0, 5.0, 2.0}, 0.3))
    }
    """


GO_TEST_FAIL = fusion_twin(  # its pass twin's answers swapped
    GO_TEST_PASS,
    ("                    return true\n", "                    return false\n"),
    ("        return false\n    }\n\n", "        return true\n    }\n\n"),
)


JAVA_EXTERNAL_JAR = """
    import org.javatuples.Pair;
    import org.javatuples.Triplet;

    public class Main {
        public static void main(String[] args) {
            // Creating a Pair of String and Integer
            Pair<String, Integer> pair = Pair.with("apple", 1);

            // Accessing the elements of the Pair
            String fruit = pair.getValue0();
            Integer quantity = pair.getValue1();
            System.out.println("Fruit: " + fruit + ", Quantity: " + quantity);

            // Creating a Triplet of String, Integer, and Double
            Triplet<String, Integer, Double> triplet = Triplet.with("banana", 2, 0.99);

            // Accessing the elements of the Triplet
            String fruitTriplet = triplet.getValue0();
            Integer quantityTriplet = triplet.getValue1();
            Double priceTriplet = triplet.getValue2();
            System.out.println("Fruit: " + fruitTriplet + ", Quantity: " + quantityTriplet + ", Price: " + priceTriplet);
        }
    }
    """  # noqa: E501 (SandboxFusion's code, as it is)


JEST_PASS = """
import { describe, expect, test } from '@jest/globals';

function MinSubArrayLen(target: number, nums: number[]): number {
    let n = nums.length;
    let minLength = Infinity; // 初始化为极大值
    let sum = 0; // 存储子数组的和
    let start = 0; // 子数组的起始索引

    for (let end = 0; end < n; end++) {
        sum += nums[end]; // 将当前元素加到和中

        while (sum >= target) {
            minLength = Math.min(minLength, end - start + 1); // 更新最小长度
            sum -= nums[start]; // 移动起始索引，并减去这个值
            start++;
        }
    }

    return minLength === Infinity ? 0 : minLength; // 如果长度未被更新过，则返回0，表示没有找到
}

describe('MinSubArrayLen', () => {
    test('finds minimum length of a subarray with sum >= target', () => {
        expect(MinSubArrayLen(7, [2, 3, 1, 2, 4, 3])).toBe(2);
        expect(MinSubArrayLen(15, [1, 2, 3, 4, 5])).toBe(5);
        expect(MinSubArrayLen(4, [1, 4, 4])).toBe(1);
        expect(MinSubArrayLen(11, [1, 1, 1, 1, 1, 1, 1, 1])).toBe(0);
    });

    test('returns 0 if no such subarray exists', () => {
        expect(MinSubArrayLen(100, [1, 2, 3, 4, 5])).toBe(0);
        expect(MinSubArrayLen(7, [2, 1])).toBe(0);
    });

    test('works with single element array', () => {
        expect(MinSubArrayLen(3, [3])).toBe(1);
        expect(MinSubArrayLen(3, [1])).toBe(0);
    });
});

                             """


JEST_FAIL = """
import { describe, expect, test } from '@jest/globals';

function MinSubArrayLen(target: number, nums: number[]): number {
    return 0
}

describe('MinSubArrayLen', () => {
    test('finds minimum length of a subarray with sum >= target', () => {
        expect(MinSubArrayLen(7, [2, 3, 1, 2, 4, 3])).toBe(2);
        expect(MinSubArrayLen(15, [1, 2, 3, 4, 5])).toBe(5);
        expect(MinSubArrayLen(4, [1, 4, 4])).toBe(1);
        expect(MinSubArrayLen(11, [1, 1, 1, 1, 1, 1, 1, 1])).toBe(0);
    });

    test('returns 0 if no such subarray exists', () => {
        expect(MinSubArrayLen(100, [1, 2, 3, 4, 5])).toBe(0);
        expect(MinSubArrayLen(7, [2, 1])).toBe(0);
    });

    test('works with single element array', () => {
        expect(MinSubArrayLen(3, [3])).toBe(1);
        expect(MinSubArrayLen(3, [1])).toBe(0);
    });
});

                             """


JUNIT_PASS = """
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.*;

public class PhoneNumberCreator {
    public static String createPhoneNumber(int[] numbers) {
        StringBuilder phoneNumber = new StringBuilder("(");
        for (int i = 0; i < numbers.length; i++) {
            if (i == 3) {
                phoneNumber.append(") ");
            } else if (i == 6) {
                phoneNumber.append("-");
            }
            phoneNumber.append(numbers[i]);
        }
        return phoneNumber.toString();
    }
}

class PhoneNumberCreatorTest {
    @Test
    void testCreatePhoneNumber2() {
        assertEquals("(987) 654-3210", PhoneNumberCreator.createPhoneNumber(new int[]{9,8,7,6,5,4,3,2,1,0}));
    }

    @Test
    void testCreatePhoneNumber3() {
        assertEquals("(111) 111-1111", PhoneNumberCreator.createPhoneNumber(new int[]{1,1,1,1,1,1,1,1,1,1}));
    }

    @Test
    void testCreatePhoneNumber4() {
        assertEquals("(999) 999-9999", PhoneNumberCreator.createPhoneNumber(new int[]{9,9,9,9,9,9,9,9,9,9}));
    }

    @Test
    void testCreatePhoneNumber5() {
        assertEquals("(123) 456-7890", PhoneNumberCreator.createPhoneNumber(new int[]{1,2,3,4,5,6,7,8,9,0}));
    }

    @Test
    void testCreatePhoneNumber6() {
        assertEquals("(000) 000-0000", PhoneNumberCreator.createPhoneNumber(new int[]{0,0,0,0,0,0,0,0,0,0}));
    }

    //boundary cases
    @Test
    void testCreatePhoneNumber7() {
        assertEquals("(123) 456-7890", PhoneNumberCreator.createPhoneNumber(new int[]{1,2,3,4,5,6,7,8,9,0}));
    }

    @Test
    void testCreatePhoneNumber8() {
        assertEquals("(000) 000-0000", PhoneNumberCreator.createPhoneNumber(new int[]{0,0,0,0,0,0,0,0,0,0}));
    }

    @Test
    void testCreatePhoneNumber9() {
        assertEquals("(999) 999-9999", PhoneNumberCreator.createPhoneNumber(new int[]{9,9,9,9,9,9,9,9,9,9}));
    }

    @Test
    void testCreatePhoneNumber10() {
        assertEquals("(123) 456-7890", PhoneNumberCreator.createPhoneNumber(new int[]{1,2,3,4,5,6,7,8,9,0}));
    }
}
    """


JUNIT_FAIL = fusion_twin(JUNIT_PASS, ("if (i == 3)", "if (i == 9)"), ("if (i == 6)", "if (i == 2)"))  # wrong places


PYTEST_PASS = r"""
def word_count(file_path):
    try:
        # 读取文件内容
        with open(file_path, 'r', encoding='utf-8') as file:
            content = file.read()

        # 移除标点符号并转换为小写
        translator = str.maketrans("", "", string.punctuation)
        content = content.translate(translator).lower()

        # 使用 Counter 统计单词出现次数
        words = content.split()
        word_counter = Counter(words)

        # 按照出现次数降序排列
        sorted_word_count = sorted(word_counter.items(), key=lambda x: x[1], reverse=True)

        for word, count in sorted_word_count:
            print(f"'{word}': {count}")

    except FileNotFoundError:
        print(f"Error: File '{file_path}' not found.")

import string
from collections import Counter


class Testword_count:
    def test_word_count_case_sensitive_file(self, capfd, tmp_path):
        file_path = tmp_path / 'test_case_sensitive.txt'
        with open(file_path, 'w', encoding='utf-8') as file:
            file.write("Case case CASE")
        word_count(file_path)
        captured = capfd.readouterr()
        assert "'case': 3" in captured.out


    def test_word_count_punctuation_file(self, capfd, tmp_path):
        file_path = tmp_path / 'test_punctuation.txt'
        with open(file_path, 'w', encoding='utf-8') as file:
            file.write("This sentence has some punctuation, like commas and periods.")
        word_count(file_path)
        captured = capfd.readouterr()
        assert "'this': 1\n'sentence': 1\n'has': 1\n'some': 1\n'punctuation': 1\n'like': 1\n'commas': 1\n'and': 1\n'periods': 1\n" in captured.out
"""  # noqa: E501 (SandboxFusion's code, as it is)


PYTEST_FAIL = fusion_twin(  # its pass twin's assertions negated
    PYTEST_PASS,
    ('" in captured.out\n\n', '" not in captured.out\n\n'),
    ('\\n" in captured.out\n', '\\n" not in captured.out\n'),
)


RACKET_ASSERTION_SUCCESS = """
#lang racket

;; Return length of given string
;; >>> (strlen "")
;; 0
;; >>> (strlen "abc")
;; 3
(define (strlen string)
  (string-length string))
                             
(require rackunit)

(define (test-humaneval)

  (let (( candidate strlen))
    (check-within (candidate "") 0 0.001)
    (check-within (candidate "x") 1 0.001)
    (check-within (candidate "asdasnakj") 9 0.001)
))

(test-humaneval)
    """  # noqa: W293 (SandboxFusion's code, as it is)


VERILOG_BASIC = r"""
`timescale 1 ps/1 ps
`define OK 12
`define INCORRECT 13
module reference_module(
	input a,
	input b,
	output out_assign,
	output reg out_alwaysblock
);

	assign out_assign = a & b;
	always @(*) out_alwaysblock = a & b;

endmodule


module stimulus_gen (
	input clk,
	output reg a, b,
	output reg[511:0] wavedrom_title,
	output reg wavedrom_enable
);


// Add two ports to module stimulus_gen:
//    output [511:0] wavedrom_title
//    output reg wavedrom_enable

	task wavedrom_start(input[511:0] title = "");
	endtask

	task wavedrom_stop;
		#1;
	endtask



	initial begin
		int count; count = 0;
		{a,b} <= 1'b0;
		wavedrom_start("AND gate");
		repeat(10) @(posedge clk)
			{a,b} <= count++;
		wavedrom_stop();

		repeat(200) @(posedge clk, negedge clk)
			{b,a} <= $random;

		#1 $finish;
	end

endmodule

module tb();

	typedef struct packed {
		int errors;
		int errortime;
		int errors_out_assign;
		int errortime_out_assign;
		int errors_out_alwaysblock;
		int errortime_out_alwaysblock;

		int clocks;
	} stats;

	stats stats1;


	wire[511:0] wavedrom_title;
	wire wavedrom_enable;
	int wavedrom_hide_after_time;

	reg clk=0;
	initial forever
		#5 clk = ~clk;

	logic a;
	logic b;
	logic out_assign_ref;
	logic out_assign_dut;
	logic out_alwaysblock_ref;
	logic out_alwaysblock_dut;

	initial begin
		$dumpfile("wave.vcd");
		$dumpvars(1, stim1.clk, tb_mismatch ,a,b,out_assign_ref,out_assign_dut,out_alwaysblock_ref,out_alwaysblock_dut );
	end


	wire tb_match;		// Verification
	wire tb_mismatch = ~tb_match;

	stimulus_gen stim1 (
		.clk,
		.* ,
		.a,
		.b );
	reference_module good1 (
		.a,
		.b,
		.out_assign(out_assign_ref),
		.out_alwaysblock(out_alwaysblock_ref) );

	top_module top_module1 (
		.a,
		.b,
		.out_assign(out_assign_dut),
		.out_alwaysblock(out_alwaysblock_dut) );


	bit strobe = 0;
	task wait_for_end_of_timestep;
		repeat(5) begin
			strobe <= !strobe;  // Try to delay until the very end of the time step.
			@(strobe);
		end
	endtask


	final begin
		if (stats1.errors_out_assign) $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "out_assign", stats1.errors_out_assign, stats1.errortime_out_assign);
		else $display("Hint: Output '%s' has no mismatches.", "out_assign");
		if (stats1.errors_out_alwaysblock) $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "out_alwaysblock", stats1.errors_out_alwaysblock, stats1.errortime_out_alwaysblock);
		else $display("Hint: Output '%s' has no mismatches.", "out_alwaysblock");

		$display("Hint: Total mismatched samples is %1d out of %1d samples\n", stats1.errors, stats1.clocks);
		$display("Simulation finished at %0d ps", $time);
		$display("Mismatches: %1d in %1d samples", stats1.errors, stats1.clocks);
	end

	// Verification: XORs on the right makes any X in good_vector match anything, but X in dut_vector will only match X.
	assign tb_match = ( { out_assign_ref, out_alwaysblock_ref } === ( { out_assign_ref, out_alwaysblock_ref } ^ { out_assign_dut, out_alwaysblock_dut } ^ { out_assign_ref, out_alwaysblock_ref } ) );
	// Use explicit sensitivity list here. @(*) causes NetProc::nex_input() to be called when trying to compute
	// the sensitivity list of the @(strobe) process, which isn't implemented.
	always @(posedge clk, negedge clk) begin

		stats1.clocks++;
		if (!tb_match) begin
			if (stats1.errors == 0) stats1.errortime = $time;
			stats1.errors++;
		end
		if (out_assign_ref !== ( out_assign_ref ^ out_assign_dut ^ out_assign_ref ))
		begin if (stats1.errors_out_assign == 0) stats1.errortime_out_assign = $time;
			stats1.errors_out_assign = stats1.errors_out_assign+1'b1; end
		if (out_alwaysblock_ref !== ( out_alwaysblock_ref ^ out_alwaysblock_dut ^ out_alwaysblock_ref ))
		begin if (stats1.errors_out_alwaysblock == 0) stats1.errortime_out_alwaysblock = $time;
			stats1.errors_out_alwaysblock = stats1.errors_out_alwaysblock+1'b1; end

	end
endmodule
    
module top_module(
	input a,
	input b,
	output out_assign,
	output reg out_alwaysblock
);
    
assign out_assign = a & b;
always @(*) out_alwaysblock = a & b;
endmodule
    """  # noqa: E501, W293 (SandboxFusion's code, as it is)

# test_isolation.py's SERVER_1 (and SERVER_2, the same with `localhost` for `127.0.0.1`): a program that serves HTTP
# on a loopback port and fetches from it with `requests`. It picks a random port in 30000-60000; these are fixed.
SERVER = """
import http.server
import socketserver
import sys
import threading
import requests

# Define the handler to serve the request
class MyHandler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header('Content-type', 'text/html')
        self.end_headers()
        self.wfile.write(b'Hello, this is a special string!')

# Function to start the server
def start_server():
    try:
        PORT = {port}
        handler = MyHandler
        with socketserver.TCPServer(("", PORT), handler) as httpd:
            httpd.serve_forever()
    except Exception as e:
        print(e)
        sys.exit(1)

# Run the server in a separate thread
server_thread = threading.Thread(target=start_server)
server_thread.daemon = True
server_thread.start()

# Function to make a request to the server and check the response
def test_server_response():
    url = "http://{host}:{port}"
    response = requests.get(url)
    
    if response.status_code == 200 and "special string" in response.text:
        print("Test Passed: Correct response received.")
    else:
        print("Test Failed: Incorrect response received.")

# Give the server a moment to start
import time
time.sleep({wait_time})

# Test the server response
test_server_response()
"""  # noqa: W293 (SandboxFusion's code, as it is)
PORTS = (38017, 38018, 38019)

CASES = (
    Case(
        "test_bash.py::test_bash_echo",
        {"language": "bash", "code": 'echo "Hello World"', "run_timeout": 5},
        Expect("Success", stdout_stripped="Hello World"),
    ),
    Case(
        "test_bash.py::test_bash_sleep_timeout",
        {"language": "bash", "code": "sleep 0.2", "run_timeout": 0.1},
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_bash.py::test_bash_false_condition",
        {"language": "bash", "code": "test 1 -eq 2", "run_timeout": 5},
        Expect("Failed", run="Finished"),
    ),
    Case(
        "test_bash.py::test_bash_syntax_error",
        {"language": "bash", "code": "if [", "run_timeout": 5},
        Expect("Failed", run="Finished", in_stderr="syntax error"),
    ),
    Case(
        "test_bash.py::test_bash_stdin",
        {
            "language": "bash",
            "code": """
    read input
    echo $input
    """,
            "run_timeout": 5,
            "stdin": "65535",
        },
        Expect("Success", run="Finished", stdout="65535\n"),
    ),
    Case(
        "test_cpp.py::test_cpp_print",
        {
            "language": "cpp",
            "code": """
    #include <iostream>

    int main() {
        std::cout << "123" << std::endl;
        return 0;
    }
    """,
            "run_timeout": 5,
        },
        Expect("Success", compiled=True, stdout_stripped="123"),
    ),
    Case(
        "test_cpp.py::test_cpp_timeout",
        {
            "language": "cpp",
            "code": """
    #include <iostream>
    #include <chrono>
    #include <thread>

    int main() {
        std::this_thread::sleep_for(std::chrono::milliseconds(1000));
        return 0;
    }
    """,
            "run_timeout": 0.5,
            "compile_timeout": 5,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_cpp.py::test_cpp_assertion_error",
        {
            "language": "cpp",
            "code": """
    #include <iostream>
    #include <cassert>

    int main() {
        assert(1 == 2);
        return 0;
    }
    """,
        },
        Expect("Failed", run="Finished", in_stderr="Assertion"),
    ),
    Case(
        "test_cpp.py::test_cpp_compile_error",
        {
            "language": "cpp",
            "code": """
    int main() {
        object i = ?;
        return 0;
    }
    """,
        },
        Expect("Failed", compile_error=True),
    ),
    Case(
        "test_cpp.py::test_cpp_stdin",
        {
            "language": "cpp",
            "code": """
    #include <iostream>

    int main() {
        int num;
        std::cin >> num;
        std::cout << num << std::endl;
        return 0;
    }
    """,
            "run_timeout": 5,
            "stdin": "65535",
        },
        Expect("Success", run="Finished", stdout="65535\n"),
    ),
    Case(
        "test_cpp.py::test_cpp_pthread",
        {"language": "cpp", "code": CPP_PTHREAD, "run_timeout": 2},
        Expect("Success", run="Finished"),
    ),
    Case(
        "test_csharp.py::test_csharp_print",
        {
            "language": "csharp",
            "code": """
    using System;

    public class Program
    {
        public static void Main(string[] args)
        {
            Console.WriteLine("123");
        }
    }
    """,
            "run_timeout": 20,
        },
        Expect("Success", stdout_stripped="123"),
    ),
    Case(
        "test_csharp.py::test_csharp_assertion_error",
        {
            "language": "csharp",
            "code": """
    using System;
    using System.Diagnostics;

    public class Program
    {
        public static void Main(string[] args)
        {
            Debug.Assert(1 == 2, "Assertion failed");
        }
    }
    """,
        },
        Expect("Failed", in_stderr="Assertion failed"),
    ),
    Case(
        "test_csharp.py::test_csharp_stdin",
        {
            "language": "csharp",
            "code": """
    public class Program
    {
        public static void Main(string[] args)
        {
            Console.WriteLine(Convert.ToInt32(Console.ReadLine()));
        }
    }
                             """,
            "stdin": "65535",
        },
        Expect("Success", run="Finished", stdout="65535\n"),
    ),
    Case(
        "test_d_ut.py::test_D_ut_print",
        {"language": "D_ut", "code": D_UT_PRINT, "run_timeout": 5},
        Expect("Success", in_stdout="Hello, World!"),
    ),
    Case(
        "test_d_ut.py::test_D_ut_timeout",
        {
            "language": "D_ut",
            "code": """
import core.thread;
import std.stdio;

void sleepSeconds() {
    Thread.sleep( dur!("seconds")( 5 ) );
}

void main() {
    sleepSeconds();
    // 5秒后执行下面的代码
    writeln("5 seconds have passed.");
}
    """,
            "run_timeout": 1,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_d_ut.py::test_D_ut_assertion_success",
        {
            "language": "D_ut",
            "code": """
unittest
{
    assert(0 == 0);
}
void main(){}
    """,
        },
        Expect("Success", run="Finished"),
    ),
    Case(
        "test_d_ut.py::test_D_ut_assertion_error",
        {
            "language": "D_ut",
            "code": """
unittest
{
    assert(0 == 1);
}
void main(){}
    """,
        },
        Expect("Failed", run="Finished"),
    ),
    Case(
        "test_go.py::test_golang_print",
        {
            "language": "go",
            "code": """
    package main

    import (
        "fmt"
    )

    func main() {
        fmt.Println("123")
    }
    """,
        },
        Expect("Success", compiled=True, stdout_stripped="123"),
    ),
    Case(
        "test_go.py::test_golang_timeout",
        {
            "language": "go",
            "code": """
    package main

    import (
        "time"
    )

    func main() {
        time.Sleep(200 * time.Millisecond)
    }
    """,
            "run_timeout": 0.19,
            "compile_timeout": 1,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_go.py::test_golang_stdin",
        {
            "language": "go",
            "code": """
    package main

    import "fmt"

    func main() {
        var num int
        fmt.Scan(&num)
        fmt.Println(num)
    }
    """,
            "run_timeout": 5,
            "stdin": "65535",
        },
        Expect("Success", run="Finished", stdout="65535\n"),
    ),
    Case(
        "test_go_test.py::test_golang_test_pass",
        {"language": "go_test", "code": GO_TEST_PASS, "run_timeout": 20},
        Expect("Success", in_stdout="ok"),
    ),
    Case(
        "test_go_test.py::test_golang_test_fail",
        {"language": "go_test", "code": GO_TEST_FAIL, "run_timeout": 20},
        Expect("Failed", in_stdout="Not equal"),
    ),
    Case(
        "test_go_test.py::test_golang_test_timeout",
        {
            "language": "go_test",
            "code": """
    package main

    import (
        "time"
        "testing"
    )

    func TestTimeout(t *testing.T) {
        time.Sleep(200 * time.Millisecond)
    }
    """,
            "run_timeout": 0.19,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_isolation.py::test_isolation_network_server_127",
        {"language": "python", "code": SERVER.format(host="127.0.0.1", port=PORTS[0], wait_time=1), "run_timeout": 5},
        Expect("Success", in_stdout="Test Passed"),
    ),
    Case(
        "test_isolation.py::test_isolation_network_server_localhost",
        {"language": "python", "code": SERVER.format(host="localhost", port=PORTS[1], wait_time=1), "run_timeout": 5},
        Expect("Success", in_stdout="Test Passed"),
    ),
    Case(
        "test_isolation.py::test_isolation_network_server_port_conflict",
        {"language": "python", "code": SERVER.format(host="127.0.0.1", port=PORTS[2], wait_time=2), "run_timeout": 6},
        Expect("Success", in_stdout="Test Passed"),
        at_once=2,
    ),
    Case(
        "test_java.py::test_java_print",
        {
            "language": "java",
            "code": """
    public class Main {
        public static void main(String[] args) {
            System.out.println(123);
        }
    }
    """,
        },
        Expect("Success", compiled=True, stdout_stripped="123"),
    ),
    Case(
        "test_java.py::test_java_compile_error",
        {
            "language": "java",
            "code": """
    public class Main {
        public static void main(String[] args) {
            System.uto.println(123);
        }
    }
    """,
        },
        Expect("Failed", compile_error=True),
    ),
    Case(
        "test_java.py::test_java_timeout",
        {
            "language": "java",
            "code": """
    public class Main {
        public static void main(String[] args) {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                System.err.println("The sleeping thread was interrupted: " + e.getMessage());
            }
        }
    }
    """,
            "run_timeout": 0.1,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_java.py::test_java_assertion_error",
        {
            "language": "java",
            "code": """
    public class Main {
        public static void main(String[] args) {
            throw new AssertionError("Intentional assertion error");
        }
    }
    """,
        },
        Expect("Failed", run="Finished", in_stderr="java.lang.AssertionError"),
    ),
    Case(
        "test_java.py::test_java_assert",
        {
            "language": "java",
            "code": """
    public class Main {
        public static void main(String[] args) {
            assert 1 == 2;
        }
    }
    """,
        },
        Expect("Failed", run="Finished"),
    ),
    Case(
        "test_java.py::test_java_external_jar",
        {"language": "java", "code": JAVA_EXTERNAL_JAR},
        Expect("Success", run="Finished", in_stdout="Fruit: banana, Quantity: 2, Price: 0.99"),
    ),
    Case(
        "test_java.py::test_java_stdin",
        {
            "language": "java",
            "code": """
    import java.util.Scanner;

    public class Main {
        public static void main(String[] args) {
            Scanner scanner = new Scanner(System.in);
            int number = scanner.nextInt();
            System.out.println(number);
        }
    }
                             """,
            "run_timeout": 5,
            "stdin": "65535",
        },
        Expect("Success", run="Finished", stdout="65535\n"),
    ),
    Case(
        "test_jest.py::test_jest_pass",
        {"language": "jest", "code": JEST_PASS, "run_timeout": 10},
        Expect("Success", run="Finished"),
    ),
    Case(
        "test_jest.py::test_jest_fail",
        {"language": "jest", "code": JEST_FAIL, "run_timeout": 10},
        Expect("Failed", run="Finished"),
    ),
    Case(
        "test_junit.py::test_junit_pass",
        {"language": "junit", "code": JUNIT_PASS},
        Expect("Success", compiled=True),
    ),
    Case(
        "test_junit.py::test_junit_fail",
        {"language": "junit", "code": JUNIT_FAIL},
        Expect("Failed", compiled=True),
    ),
    Case(
        "test_kotlin_script.py::test_kotlin_script_print",
        {
            "language": "kotlin_script",
            "code": """
println("Hello, World!")
    """,
            "run_timeout": 30,
        },
        Expect("Success", in_stdout="Hello, World!"),
    ),
    Case(
        "test_kotlin_script.py::test_kotlin_script_assertion_success",
        {
            "language": "kotlin_script",
            "code": """
fun minCost() : Int {
    return 0
}

fun main() {
    var x : Int = minCost();
    var y : Int = 0;
    if (x != y) {
        throw Exception("Exception -- test case did not pass. x = " + x)
    }
}

main()
    """,
            "run_timeout": 40,
        },
        Expect("Success", run="Finished"),
    ),
    Case(
        "test_kotlin_script.py::test_kotlin_script_assertion_error",
        {
            "language": "kotlin_script",
            "code": """
fun minCost() : Int {
    return 0
}

fun main() {
    var x : Int = minCost();
    var y : Int = 1;
    if (x != y) {
        throw Exception("Exception -- test case did not pass. x = " + x)
    }
}

main()
    """,
            "run_timeout": 20,
        },
        Expect("Failed", run="Finished", in_stderr="java.lang.Exception"),
    ),
    Case(
        "test_lua.py::test_lua_print",
        {
            "language": "lua",
            "code": """
print("Hello, World!")
    """,
            "run_timeout": 5,
        },
        Expect("Success", stdout_stripped="Hello, World!"),
    ),
    Case(
        "test_lua.py::test_lua_timeout",
        {
            "language": "lua",
            "code": """
os.execute("sleep 3")
    """,
            "run_timeout": 1,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_lua.py::test_lua_assertion_success",
        {
            "language": "lua",
            "code": """
lu = require('luaunit')
lu.assertEquals(0, 0)
    """,
        },
        Expect("Success", run="Finished"),
    ),
    Case(
        "test_lua.py::test_lua_assertion_error",
        {
            "language": "lua",
            "code": """
lu = require('luaunit')
lu.assertEquals(1, 2)
    """,
        },
        Expect("Failed", run="Finished", in_stderr="LuaUnit test FAILURE"),
    ),
    Case(
        "test_nodejs.py::test_nodejs_print",
        {"language": "nodejs", "code": "console.log(123)", "run_timeout": 5},
        Expect("Success", stdout_stripped="123"),
    ),
    Case(
        "test_nodejs.py::test_nodejs_timeout",
        {
            "language": "nodejs",
            "code": """
    const util = require('util');
    const sleep = util.promisify(setTimeout);

    async function main() {
        await sleep(1000);
    }

    main();
                             """,
            "run_timeout": 0.1,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_nodejs.py::test_nodejs_assertion_error",
        {
            "language": "nodejs",
            "code": """
    const assert = require('assert');
    assert.strictEqual(1, 2, '1 !== 2');
    """,
        },
        Expect("Failed", run="Finished", in_stderr="AssertionError"),
    ),
    Case(
        "test_nodejs.py::test_nodejs_humanevalx_assertion_error",
        {"language": "nodejs", "code": "console.assert(1 === 2);"},
        Expect("Success", run="Finished", in_stderr="Assertion failed"),
    ),
    Case(
        "test_nodejs.py::test_nodejs_lodash_dep",
        {
            "language": "nodejs",
            "code": """
    const _ = require("lodash");
    const assert = require('assert');

    assert(_.isEqual(1, 1))
                             """,
            "run_timeout": 5,
        },
        Expect("Success"),
    ),
    Case(
        "test_nodejs.py::test_nodejs_stdin",
        {
            "language": "nodejs",
            "code": """
    process.stdin.on('data', (input) => {
        const num = parseInt(input.toString());
        console.log(num);
        process.exit();
    });
                             """,
            "run_timeout": 5,
            "stdin": "65535",
        },
        Expect("Success", run="Finished", stdout="65535\n"),
    ),
    Case(
        "test_perl.py::test_perl_print",
        {
            "language": "perl",
            "code": """
print "Hello, World!
";
    """,
            "run_timeout": 5,
        },
        Expect("Success", in_stdout="Hello, World!"),
    ),
    Case(
        "test_perl.py::test_perl_timeout",
        {
            "language": "perl",
            "code": """
sleep(5);
print("Finished waiting for 5 seconds.")
    """,
            "run_timeout": 1,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_perl.py::test_perl_assertion_success",
        {
            "language": "perl",
            "code": """
use Test::Deep;
use Data::Compare;

sub test {
        if(eq_deeply(1, 1)) {
        print "ok!" }else{
        exit 1;
        }
}

test();
    """,
        },
        Expect("Success", run="Finished"),
    ),
    Case(
        "test_perl.py::test_perl_assertion_error",
        {
            "language": "perl",
            "code": """
use Test::Deep;

sub test {
        if(eq_deeply(0, 1)) {
        print "ok!" }else{
        exit 1;
        }
}

test();
    """,
        },
        Expect("Failed", run="Finished"),
    ),
    Case(
        "test_php.py::test_php_print",
        {
            "language": "php",
            "code": """
    <?php
    echo "123";
    ?>
    """,
            "run_timeout": 5,
        },
        Expect("Success", stdout_stripped="123"),
    ),
    Case(
        "test_php.py::test_php_timeout",
        {
            "language": "php",
            "code": """
    <?php
    sleep(2); // Sleep for 2 seconds
    ?>
    """,
            "run_timeout": 0.1,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_php.py::test_php_error",
        {
            "language": "php",
            "code": """
    <?php
    trigger_error("Custom error", E_USER_ERROR);
    ?>
    """,
        },
        Expect("Failed", in_output="Custom error"),
    ),
    Case(
        "test_php.py::test_php_stdin",
        {
            "language": "php",
            "code": """
    <?php
        $input = readline();
        echo intval($input);
    ?>
                             """,
            "run_timeout": 5,
            "stdin": "65535",
        },
        Expect("Success", run="Finished", in_stdout="65535"),
    ),
    Case(
        "test_pytest.py::test_pytest_pass",
        {"language": "python", "code": PYTEST_PASS, "run_timeout": 5},
        Expect("Success"),
        then=(({"language": "pytest", "code": PYTEST_PASS, "run_timeout": 5}, Expect("Success")),),
    ),
    Case(
        "test_pytest.py::test_pytest_fail",
        {"language": "python", "code": PYTEST_FAIL, "run_timeout": 5},
        Expect("Success"),
        then=(({"language": "pytest", "code": PYTEST_FAIL, "run_timeout": 5}, Expect("Failed")),),
    ),
    Case(
        "test_python.py::test_python_print",
        {"language": "python", "code": "print(123)", "run_timeout": 5},
        Expect("Success", stdout_stripped="123"),
    ),
    Case(
        "test_python.py::test_python_timeout",
        {"language": "python", "code": "import time; time.sleep(0.2)", "run_timeout": 0.1},
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_python.py::test_python_assertion_error",
        {"language": "python", "code": "assert 1 == 2", "run_timeout": 5},
        Expect("Failed", run="Finished", in_stderr="AssertionError"),
    ),
    Case(
        "test_python.py::test_python_syntax_error",
        {"language": "python", "code": "int a = 1", "run_timeout": 5},
        Expect("Failed", run="Finished", in_stderr="SyntaxError: invalid syntax"),
    ),
    Case(
        "test_python.py::test_python_stdin",
        {"language": "python", "code": "print(int(input()))", "run_timeout": 5, "stdin": "65535"},
        Expect("Success", run="Finished", stdout="65535\n"),
    ),
    Case(
        "test_r.py::test_r_print",
        {
            "language": "R",
            "code": """
myString <- "Hello, World!"
print ( myString )
    """,
            "run_timeout": 5,
        },
        Expect("Success", in_stdout="Hello, World!"),
    ),
    Case(
        "test_r.py::test_r_assertion_success",
        {
            "language": "R",
            "code": """
stopifnot(isTRUE(all.equal(0, 0)))
    """,
        },
        Expect("Success", run="Finished"),
    ),
    Case(
        "test_r.py::test_r_assertion_error",
        {
            "language": "R",
            "code": """
stopifnot(isTRUE(all.equal(1, 0)))
    """,
        },
        Expect("Failed", run="Finished", in_stderr="Execution halted"),
    ),
    Case(
        "test_racket.py::test_racket_print",
        {
            "language": "racket",
            "code": """
#lang racket

(display "Hello, World!")
    """,
            "run_timeout": 5,
        },
        Expect("Success", in_stdout="Hello, World!"),
    ),
    Case(
        "test_racket.py::test_racket_timeout",
        {
            "language": "racket",
            "code": """
#lang racket

(display "Starting sleep...")
(sleep 10)
(display "Sleep complete!")
    """,
            "run_timeout": 5,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_racket.py::test_racket_assertion_success",
        {"language": "racket", "code": RACKET_ASSERTION_SUCCESS},
        Expect("Success", run="Finished"),
    ),
    Case(
        "test_ruby.py::test_ruby_print",
        {
            "language": "ruby",
            "code": """
puts "Hello, World!";

    """,
            "run_timeout": 5,
        },
        Expect("Success", in_stdout="Hello, World!"),
    ),
    Case(
        "test_ruby.py::test_ruby_timeout",
        {
            "language": "ruby",
            "code": """
sleep(5)
    """,
            "run_timeout": 5,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_ruby.py::test_ruby_assertion_success",
        {
            "language": "ruby",
            "code": """
require 'test/unit'
class TestSandbox < Test::Unit::TestCase
  def test_sandbox
    assert_equal(0, 0)
  end
end
    """,
        },
        Expect("Success", run="Finished"),
    ),
    Case(
        "test_ruby.py::test_ruby_assertion_error",
        {
            "language": "ruby",
            "code": """
require 'test/unit'
class TestSandbox < Test::Unit::TestCase
  def test_sandbox
    assert_equal(1, 0)
  end
end
    """,
        },
        Expect("Failed", run="Finished", in_stdout="Failure"),
    ),
    Case(
        "test_rust.py::test_rust_print",
        {
            "language": "rust",
            "code": """
    fn main() {
        println!("123");
    }
    """,
            "run_timeout": 5,
        },
        Expect("Success", compiled=True, stdout_stripped="123"),
    ),
    Case(
        "test_rust.py::test_rust_timeout",
        {
            "language": "rust",
            "code": """
    use std::{thread, time};

    fn main() {
        let sleep_duration = time::Duration::from_millis(200);
        thread::sleep(sleep_duration);
    }
    """,
            "run_timeout": 0.1,
            "compile_timeout": 1,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_rust.py::test_rust_assertion_error",
        {
            "language": "rust",
            "code": """
    fn main() {
        assert_eq!(1, 2);
    }
    """,
        },
        Expect("Failed", run="Finished", in_stderr="assertion"),
    ),
    Case(
        "test_rust.py::test_rust_compile_error",
        {
            "language": "rust",
            "code": """
    fn main() {
        let x: u32 = "Hello, world!";
        println!("{}", x);
    }
    """,
        },
        Expect("Failed", compile_error=True),
    ),
    Case(
        "test_rust.py::test_rust_stdin",
        {
            "language": "rust",
            "code": """
    use std::io;

    fn main() {
        let mut input = String::new();
        io::stdin().read_line(&mut input).expect("Failed to read line");

        let num: i32 = input.trim().parse().expect("Invalid input");
        println!("{}", num);
    }
    """,
            "stdin": "65535",
        },
        Expect("Success", run="Finished", stdout="65535\n"),
    ),
    Case(
        "test_scala.py::test_scala_print",
        {
            "language": "scala",
            "code": """
object HelloWorld {
    def main(args: Array[String]): Unit = {
        println("Hello, World!")
    }
}
    """,
            "compile_timeout": 20,
            "run_timeout": 5,
        },
        Expect("Success", in_stdout="Hello, World!"),
    ),
    Case(
        "test_scala.py::test_scala_assertion_success",
        {
            "language": "scala",
            "code": """
    object HelloWorld {
        def main(args: Array[String]) = {
            assert((0l) == (0l));
        }
    }
        """,
            "compile_timeout": 20,
        },
        Expect("Success", run="Finished"),
        then=(
            (
                {
                    "language": "scala",
                    "code": """
    object Main extends App {
        def foo() = {
            assert((0l) == (0l));
        }

        foo()
    }
        """,
                    "compile_timeout": 20,
                },
                Expect("Success", run="Finished"),
            ),
        ),
    ),
    Case(
        "test_scala.py::test_scala_assertion_error",
        {
            "language": "scala",
            "code": """
object HelloWorld {
    def main(args: Array[String]) = {
        assert((1l) == (0l));
    }
}
    """,
            "compile_timeout": 20,
        },
        Expect("Failed", run="Finished", in_stderr="assertion failed"),
        then=(
            (
                {
                    "language": "scala",
                    "code": """
    object Main extends App {
        def foo() = {
            assert((1l) == (0l));
        }

        foo()
    }
        """,
                    "compile_timeout": 20,
                },
                Expect("Failed", run="Finished"),
            ),
        ),
    ),
    Case(
        "test_typescript.py::test_typescript_print",
        {"language": "typescript", "code": "console.log(123)", "run_timeout": 5},
        Expect("Success", stdout_stripped="123"),
    ),
    Case(
        "test_typescript.py::test_typescript_timeout",
        {
            "language": "typescript",
            "code": """
    import util from 'util';

    const sleep = util.promisify(setTimeout);

    async function main() {
        await sleep(200);
    }

    main();
                             """,
            "run_timeout": 0.1,
        },
        Expect("Failed", run="TimeLimitExceeded"),
    ),
    Case(
        "test_typescript.py::test_typescript_assertion_error",
        {
            "language": "typescript",
            "code": """
    import assert from "assert";
    assert.strictEqual(1, 2, '1 !== 2');
    """,
        },
        Expect("Failed", run="Finished", in_stderr="AssertionError"),
    ),
    Case(
        "test_typescript.py::test_typescript_humanevalx_assertion_error",
        {"language": "typescript", "code": "console.assert(1 === 2);"},
        Expect("Success", run="Finished", in_stderr="Assertion failed"),
    ),
    Case(
        "test_typescript.py::test_typescript_lodash_dep",
        {
            "language": "typescript",
            "code": """
    import _ from "lodash";
    import assert from "assert";

    assert(_.isEqual(1, 1));
    console.log('done');
                             """,
            "run_timeout": 5,
        },
        Expect("Success"),
    ),
    Case(
        "test_typescript.py::test_typescript_stdin",
        {
            "language": "typescript",
            "code": """
    process.stdin.on('data', (input: Buffer) => {
    const num: number = parseInt(input.toString());
    console.log(num);
    process.exit();
    });
                             """,
            "run_timeout": 5,
            "stdin": "65535",
        },
        Expect("Success", run="Finished", stdout="65535\n"),
    ),
    Case(
        "test_verilog.py::test_verilog_basic",
        {"language": "verilog", "code": VERILOG_BASIC, "compile_timeout": 40, "run_timeout": 40},
        Expect("Success", run="Finished"),
    ),
)

NOTEBOOKS = (
    Notebook(
        "test_jupyter.py::test_jupyter_multi_cell_raise",
        ('a = "hello"', 'import sys\nsys.stderr.write("This is an error message\\n")', "assert False", "print(a)"),
        (
            CellExpect(0, stdout=""),
            CellExpect(1, stderr="This is an error message\n"),
            CellExpect(2, error_name="AssertionError"),
            CellExpect(3, stdout="hello\n"),
        ),
    ),
)


def send(sandbox: LocalServer, request: Request, copies: int) -> list[RunCodeResponse]:
    """The request through SandboxFusion's client, `copies` times at once (a SandboxError raises with its message)."""
    with ThreadPoolExecutor(copies) as pool:
        futures = [pool.submit(run_code, RunCodeRequest(**request), sandbox.url, 1) for _ in range(copies)]
        return [future.result() for future in futures]


def check(answer: RunCodeResponse, expect: Expect) -> None:
    """SandboxFusion's assertions, each as its test makes it (reading a field of a missing result fails there too)."""
    run, compiled = answer.run_result, answer.compile_result
    assert answer.status == expect.status, answer
    if expect.compiled or expect.compile_error:
        assert compiled is not None and compiled.status == "Finished", answer
    if expect.compile_error:
        assert compiled is not None and compiled.return_code != 0 and run is None, answer
    reads_run = (
        expect.run,
        expect.stdout,
        expect.stdout_stripped,
        expect.in_stdout,
        expect.in_stderr,
        expect.in_output,
    )
    if any(value is not None for value in reads_run):
        assert run is not None, answer  # its test reads run_result's fields
    if expect.run is not None:
        assert run.status == expect.run, answer
    if expect.stdout is not None:
        assert run.stdout == expect.stdout, answer
    if expect.stdout_stripped is not None:
        assert run.stdout.strip() == expect.stdout_stripped, answer
    if expect.in_stdout is not None:
        assert expect.in_stdout in run.stdout, answer
    if expect.in_stderr is not None:
        assert expect.in_stderr in run.stderr, answer
    if expect.in_output is not None:
        assert expect.in_output in run.stderr + run.stdout, answer


def check_cell(cells: list[CellRunResult], expect: CellExpect) -> None:
    cell = cells[expect.index]
    if expect.stdout is not None:
        assert cell.stdout == expect.stdout, cells
    if expect.stderr is not None:
        assert cell.stderr == expect.stderr, cells
    if expect.error_name is not None:
        assert cell.error[0]["ename"] == expect.error_name, cells


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_sandbox_fusion_runner_test(sandbox: LocalServer, case: Case) -> None:
    for request, expect in ((case.request, case.expect), *case.then):
        for answer in send(sandbox, request, case.at_once):
            check(answer, expect)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[notebook.name for notebook in NOTEBOOKS])
def test_sandbox_fusion_jupyter_test(sandbox: LocalServer, notebook: Notebook) -> None:
    answer = run_jupyter(RunJupyterRequest(cells=list(notebook.cells)), endpoint=sandbox.url, max_attempts=1)
    for expect in notebook.expect:
        check_cell(answer.cells, expect)


def test_every_fusion_runner_test_is_accounted_for_once() -> None:
    rows = [case.name for case in CASES] + [notebook.name for notebook in NOTEBOOKS]
    counts = Counter([*rows, *COVERED_ELSEWHERE, *NOT_OUR_LANGUAGES, *DIFFERS])
    assert [name for name, count in counts.items() if count > 1] == []
    assert sorted(counts) == sorted(FUSION_RUNNER_TESTS)
    assert len(set(FUSION_RUNNER_TESTS)) == len(FUSION_RUNNER_TESTS)


def test_covered_elsewhere_names_tests_that_exist() -> None:
    root = Path(__file__).parent.parent
    for target in COVERED_ELSEWHERE.values():
        path, name = target.split("::")
        tree = ast.parse((root / path).read_text())
        assert name in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}, target


def test_what_differs_is_answered_as_documented(sandbox: LocalServer) -> None:
    """DIFFERS' claims about paths and the network: `/mnt/b` is refused by name, and no host can be reached."""
    mnt = {"language": "python", "code": "open('/mnt/b', 'w')", "fetch_files": ["a.txt", "/mnt/b"]}
    refused = httpx.post(f"{sandbox.url}/run_code", json=mnt, timeout=60)
    assert refused.status_code == 422 and "/mnt/b" in refused.text, refused.text
    fetch = "import requests\nrequests.get('http://www.sina.com.cn', timeout=5)"
    [offline] = send(sandbox, {"language": "python", "code": fetch, "run_timeout": 20}, 1)
    assert offline.status == "Failed" and "ConnectionError" in offline.run_result.stderr, offline
