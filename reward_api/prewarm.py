"""Imported once by the worker pool's forkserver, before any worker is forked.

Loading the graders' models here (lingua's language models, sympy's caches) means every
worker, replacements after a timeout included, starts warm within milliseconds and shares
those pages copy-on-write instead of loading its own copy. Loading is thread-free, so
forking after it is safe.
"""

from reward_api.grading import warm_up

warm_up()
