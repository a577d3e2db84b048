"""Short names for the judge's verdicts, so tables of test cases stay readable."""

from sandbox.judge import Verdict

A = Verdict.ACCEPTED
WA = Verdict.WRONG_ANSWER
RE = Verdict.RUNTIME_ERROR
TLE = Verdict.TIME_LIMIT
MLE = Verdict.MEMORY_LIMIT
OLE = Verdict.OUTPUT_LIMIT
CE = Verdict.COMPILE_ERROR
SKIP = Verdict.SKIPPED
