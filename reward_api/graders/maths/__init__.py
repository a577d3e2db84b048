"""The math grader (`task: math`): is a completion's final answer the reference's, in whatever form it is written?

Read the modules in the order an answer goes through them:

1. `extract`: the final answer of a completion (after `</think>`, the last `\\boxed{}`, "the answer is" in eight
   languages, a plain final expression).
2. `forms`: answer forms rules can decide, rewritten as plain LaTeX (Unicode math, repeating decimals, number words,
   multiple choice, ratios, degrees, ...); `units` and `sets` are two of those families, kept apart.
3. `parse`: LaTeX into sympy (latex2sympy, and what it reads wrongly or not at all).
4. `equivalence`: the answer against the reference (exact paths first, then sympy; units and ratios kept).
5. `verdict`: the grader itself, `grade_math`: extraction, equivalence, and the verifier model (`verifier`) for what
   the rules reject, where one is configured.

(Named `maths`, not `math`: a package must not shadow the standard library's module.)
"""
