"""Training curves as a PNG a person can look at."""

from __future__ import annotations

import json
from pathlib import Path

PANELS = [
    ("reward", ["reward_mean"], "reward/"),
    ("KL (k3)", ["kl"], None),
    ("entropy", ["entropy"], None),
    ("clip fraction", ["clip_fraction"], None),
    ("response length (tokens)", ["response_length"], None),
    ("reward wait share of step time", ["reward_wait_share"], None),
    ("loss", ["loss", "value_loss"], None),
    ("tokens/s (generation)", ["tokens_per_s"], None),
]


def plot_curves(metrics_path: Path, png_path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(line) for line in Path(metrics_path).read_text().splitlines() if line.strip()]
    steps = [row["step"] for row in rows]
    figure, axes = plt.subplots(2, 4, figsize=(18, 8), constrained_layout=True)
    for axis, (title, keys, prefix) in zip(axes.flat, PANELS, strict=True):
        names = keys + sorted({k for row in rows for k in row if prefix and k.startswith(prefix)})
        for name in names:
            if any(name in row for row in rows):
                axis.plot(steps, [row.get(name, float("nan")) for row in rows], label=name, marker=".")
        axis.set_title(title)
        axis.set_xlabel("step")
        axis.grid(alpha=0.3)
        if len(names) > 1:
            axis.legend(fontsize=7)
    figure.savefig(png_path, dpi=80)
    plt.close(figure)
    return Path(png_path)
