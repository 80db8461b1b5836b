"""The benchmarks train the pages' models: the same seed, and figures read from records, not from printed text."""

import importlib.util
import re
from pathlib import Path

from booktools.split import read_source

ROOT = Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seed_before_training(source):
    """The argument of the last d2l.set_seed before the page's training run."""
    code = "\n".join(c.source for c in read_source(source).cells if c.cell_type == "code")
    training = code.index("train_seq2seq(net, train_iter")
    seeds = re.findall(r"d2l\.set_seed\((\d+)\)", code[:training])
    return int(seeds[-1])


def test_benchmark_seed_is_the_pages_seed():
    run = load("seq2seq_run")
    for page in ("bahdanau-attention", "transformer-training"):
        assert seed_before_training(ROOT / "chapters" / "attention" / f"{page}.md") == run.SEED, (
            page
        )


def test_benchmarks_read_records_not_printed_lines():
    text = (ROOT / "benchmarks" / "seq2seq_run.py").read_text(encoding="utf-8")
    assert "records.collect()" in text and "re.compile" not in text


def test_side_by_side_throughput_after_the_first_epoch(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    clock = load("side_by_side").EpochClock([1, 2])
    assert [list(clock) for _ in range(3)] == [[1, 2]] * 3 and len(clock.starts) == 3
    clock.starts = [0.0, 10.0, 20.0]
    # 300 tokens in 3 epochs: the last two epochs' 200 tokens took 30 - 10 seconds
    assert clock.steady(300, 3, 30.0) == 10.0
    assert clock.steady(100, 1, 30.0) is None


def test_taught_code_counts_checks_machinery_and_model():
    taught = load("taught_code")
    code = '''@checked
class A(nn.Module):
    """A docstring: not code."""

    def __init__(self, n):
        super().__init__()
        check_int("n", n,
                  minimum=1)
        if n > 9:
            raise ValueError("n must be <= 9; got n")
        self.w = nn.LazyLinear(n)  # a comment

    def forward(self, X):
        # only a comment
        return row_softmax(self.w(X))
'''
    counts = taught.classify(code)
    # other: @checked, class, def __init__, super, def forward; checks: 2 + 2 lines; machinery: the return
    assert counts == {"other": 5, "check": 4, "machinery": 1, "model": 1}


def test_bottleneck_records_the_machine_and_the_sampled_load(monkeypatch):
    """benchmarks/bottleneck.py samples the 1-minute load average while it runs and summarises any stretch of
    the samples; it describes the machine (cores, processor, memory, system, framework version)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    bottleneck = load("bottleneck")
    loads = iter([(1.0, 0.5, 0.2), (3.0, 1.0, 0.3), (2.0, 1.0, 0.3), (5.0, 2.0, 0.5)])
    monkeypatch.setattr(bottleneck.os, "getloadavg", lambda: next(loads))
    sampler = bottleneck.LoadSampler(interval=3600)  # the thread waits; samples added by hand below
    sampler.stop()
    assert sampler.before == [1.0, 0.5, 0.2] and sampler.samples == [1.0]
    sampler.samples += [3.0, 2.0]
    assert sampler.summary() == {
        "interval_seconds": 3600,
        "count": 3,
        "min": 1.0,
        "mean": 2.0,
        "max": 3.0,
    }
    assert (
        sampler.summary(1)["min"] == 2.0 and sampler.summary(5)["count"] == 1
    )  # no new sample: the last
    machine = bottleneck.machine("pytorch")
    assert machine["cores"] >= 1 and machine["processor"] and machine["python"]
    assert machine["framework_version"].startswith("torch ") and "threads_per_operation" in machine


def test_a_study_file_starts_with_one_head(tmp_path, monkeypatch):
    """Every study writes the same head (what, command, date, machine) through seq2seq_run, and the study scripts
    no longer write JSON themselves."""
    import datetime
    import json
    import sys

    run = load("seq2seq_run")
    monkeypatch.setattr(sys, "argv", ["benchmarks/lm_study.py", "--epochs", "1"])
    started = datetime.datetime(2026, 11, 29, tzinfo=datetime.UTC)
    out = tmp_path / "deep" / "study.json"
    run.write_study(out, {**run.study_head("a study", started, threads=1), "runs": []})
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["command"] == "benchmarks/lm_study.py --epochs 1" and data["date"] == "2026-11-29"
    assert data["machine"]["threads_per_operation"] == 1 and data["machine"]["cores"] >= 1
    scripts = ("lm_study", "beam_search", "transformer_smoothing", "bottleneck", "language_model")
    for script in (*scripts, "transformer_practice"):
        text = (ROOT / "benchmarks" / f"{script}.py").read_text(encoding="utf-8")
        assert "study_head(" in text and "write_study(" in text and "json.dumps(data" not in text, (
            script
        )
