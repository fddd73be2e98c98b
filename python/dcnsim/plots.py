"""Plots of a run's results (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path


def slowdown_by_size(summary: dict, path) -> Path:
    """Median and p99 slowdown per flow-size group (the SIRD/Homa style figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [g for g in summary["slowdown_by_size"]]
    labels = [g["label"] for g in groups]
    med = [g["median"] if g["median"] is not None else float("nan") for g in groups]
    p99 = [g["p99"] if g["p99"] is not None else float("nan") for g in groups]
    x = range(len(groups))
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.bar([i - 0.2 for i in x], med, width=0.4, label="median")
    ax.bar([i + 0.2 for i in x], p99, width=0.4, label="p99")
    ax.set_xticks(list(x))
    ax.set_xticklabels([f"{g['group']}: {lab}\n{g['count']} flows" for g, lab in zip(groups, labels)], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("slowdown (FCT / ideal FCT)")
    ax.set_xlabel("flow size")
    ax.axhline(1.0, color="grey", lw=0.8)
    title = summary.get("name") or summary.get("protocol", "")
    ax.set_title(f"{title}: {summary.get('protocol')} slowdown by size")
    ax.legend()
    fig.tight_layout()
    p = Path(path)
    fig.savefig(p, dpi=120)
    plt.close(fig)
    return p
