"""The demo's report: the per-stage accounting as rich tables, a JSON record and a matplotlib chart."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.markup import escape

from ._common import Output

__all__ = ["DemoReport", "Stage", "write_chart"]


@dataclass
class Stage:
    """One hop of the job: how many messages went in and came out, and how long it took."""

    name: str
    messages_in: int
    messages_out: int
    seconds: float
    note: str = ""

    @property
    def rate(self) -> float:
        return self.messages_out / self.seconds if self.seconds > 0 else 0.0


@dataclass
class DemoReport:
    """Everything the demo measured; ``lost`` must be 0 for a successful run."""

    url: str
    selector: str
    produced: int = 0
    selector_expected: int = 0
    selector_hits: int = 0
    parquet_rows: int = 0
    duplicates: int = 0
    remaining: int = 0
    lost: int = 0
    unexpected: int = 0
    stages: list[Stage] = field(default_factory=list)
    by_region: list[dict[str, Any]] = field(default_factory=list)
    #: the queue's figures from the broker's metrics at the end (enqueued, dequeued, expired,
    #: dead_lettered, depth, delivering); empty for a broker without the endpoint
    broker: dict[str, int] = field(default_factory=dict)
    output: str = ""
    chart: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for s, sd in zip(self.stages, d["stages"]):
            sd["msgs_per_s"] = round(s.rate, 1)
            sd["seconds"] = round(s.seconds, 3)
        d["seconds"] = round(self.seconds, 2)
        return d

    def print(self, out: Output) -> None:
        out.table(
            "amqp-jms demo: messages per stage",
            ["stage", "in", "out", "seconds", "msgs/s", "note"],
            [
                [s.name, s.messages_in, s.messages_out, f"{s.seconds:.2f}", f"{s.rate:,.0f}", s.note]
                for s in self.stages
            ],
        )
        lost_style = "[bold green]0[/bold green]" if self.lost == 0 else f"[bold red]{self.lost}[/bold red]"
        out.table(
            "accounting (by order_id, end to end)",
            ["check", "count"],
            [
                ["messages produced (MQ bridge + JMS producers)", self.produced],
                [f"selector hits expected ({escape(self.selector)})", self.selector_expected],
                ["selector hits in Parquet (distinct orders)", self.selector_hits],
                ["Parquet rows", self.parquet_rows],
                ["duplicates", self.duplicates],
                ["not selected, drained from the queue", self.remaining],
                ["selected by mistake", self.unexpected],
                ["lost (found nowhere, or selected but not in Parquet)", lost_style],
            ],
        )
        if self.broker:
            out.table(
                "the broker's metrics for the orders queue (Prometheus endpoint)",
                ["figure", "count"],
                [[name.replace("_", " "), value] for name, value in self.broker.items()],
            )
        if self.by_region:
            cols = list(self.by_region[0])
            out.table("per-region aggregate (Spark)", cols, [[r[c] for c in cols] for r in self.by_region])
        out.info(f"Parquet: {self.output}   chart: {self.chart}   total {self.seconds:.1f} s")


def write_chart(report: DemoReport, path: Path) -> Path:
    """A PNG with messages and throughput per stage, and the per-region aggregate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    names = [s.name for s in report.stages]
    x = range(len(names))
    ax = axes[0]
    ax.bar([i - 0.2 for i in x], [s.messages_in for s in report.stages], 0.4, label="in", color="#4c72b0")
    ax.bar([i + 0.2 for i in x], [s.messages_out for s in report.stages], 0.4, label="out", color="#55a868")
    ax.set_xticks(list(x), names, rotation=20, ha="right")
    ax.set_title("messages per stage")
    ax.legend()
    ax = axes[1]
    ax.bar(list(x), [s.rate for s in report.stages], color="#dd8452")
    ax.set_xticks(list(x), names, rotation=20, ha="right")
    ax.set_title("throughput (msgs/s)")
    ax = axes[2]
    if report.by_region:
        key = next(iter(report.by_region[0]))
        labels = [str(r[key]) for r in report.by_region]
        ax.bar(labels, [r.get("messages", 0) for r in report.by_region], color="#8172b2")
        ax.set_title(f"selected orders per {key}")
    else:
        ax.axis("off")
    fig.suptitle(
        f"amqp-jms demo — {report.produced} produced, {report.selector_hits} selected, "
        f"{report.duplicates} duplicates, {report.lost} lost"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
