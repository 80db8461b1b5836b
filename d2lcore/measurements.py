"""Measurements that a page draws but does not run (framework-neutral): results of the book's
benchmarks, too long to train in a notebook, committed as package data (``data/measurements/``),
so that a notebook draws them wherever it runs.

``bottleneck.json`` (benchmarks/bottleneck.py) holds the translation quality of the plain
encoder–decoder and of the one with Bahdanau attention, by the length of the English source, over
several seeds; :func:`show_bottleneck` draws it and shows it as the record ``"bottleneck"``.
"""

import importlib.resources
import json
import os
import statistics
from pathlib import Path

from d2lcore.contracts.engine import checked

MODELS = ("plain", "attention")
"""The two models: without attention (d2l.Seq2SeqDecoder) and with it (d2l.Seq2SeqAttentionDecoder)."""

SPLITS = ("training", "held_out")
"""The sentences translated: the English sources of the 600 training pairs, and the held-out file."""

BUCKETS = {"words_1": [1, 1], "words_2": [2, 2], "words_3_4": [3, 4]}
"""Source lengths in words (punctuation not counted), smallest and largest of each group."""

MEASURES = ("bleu", "exact", "corpus_bleu", "chrf")
"""Mean per-sentence BLEU (k = 2) and share of exact translations (0 ... 1); corpus BLEU and
chrF (sacreBLEU, 0 ... 100)."""

LABELS = {"plain": "without attention", "attention": "with attention"}
_SPLIT_TITLES = {"training": "Training sentences", "held_out": "Held-out sentences"}


def words(sentence):
    """The number of words of a tokenized sentence: its tokens with a letter or a digit."""
    return sum(any(c.isalnum() for c in token) for token in sentence.split())


def bucket_of(sentence):
    """The key of BUCKETS whose range holds the sentence's number of words, or None."""
    n = words(sentence)
    return next((key for key, (low, high) in BUCKETS.items() if low <= n <= high), None)


def _stats(values):
    return {
        "mean": statistics.fmean(values),
        "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def summarise(data):
    """The summary of a measurement's ``runs`` over seeds: ``{model: {split: {bucket: {"sentences":
    n, measure: {"mean", "std", "min", "max"}}}}}``, and under ``"gain"`` the same statistics of
    attention - plain, seed by seed."""
    runs = {(r["model"], r["seed"]): r["scores"] for r in data["runs"]}
    seeds = sorted({seed for _, seed in runs})
    complete = [s for s in seeds if all((m, s) in runs for m in MODELS)]
    summary = {}
    for model in (*MODELS, "gain"):
        summary[model] = {}
        for split in SPLITS:
            summary[model][split] = {}
            for bucket in ("all", *BUCKETS):
                first = runs[(MODELS[0], complete[0])][split].get(bucket)
                if first is None:  # no sentence of this length in the split
                    continue
                entry = {"sentences": first["sentences"]}
                for measure in MEASURES:
                    if model == "gain":
                        values = [
                            runs[("attention", s)][split][bucket][measure]
                            - runs[("plain", s)][split][bucket][measure]
                            for s in complete
                        ]
                    else:
                        values = [
                            runs[(model, s)][split][bucket][measure] for s in complete
                        ]
                    entry[measure] = _stats(values)
                summary[model][split][bucket] = entry
    return summary


def read_measurement(name, path=None):
    """The measurement ``name`` (``"bottleneck"``) as committed with d2lcore, or the JSON file at
    ``path`` (one that the benchmark wrote). Returns its dict."""
    if path is None:
        path = importlib.resources.files("d2lcore.data") / "measurements" / f"{name}.json"
    elif not isinstance(path, str | os.PathLike):
        raise TypeError(
            f"path must be None or the path of a measurement file; got {path!r}"
        )
    elif not Path(path).is_file():
        raise FileNotFoundError(
            f"path must be a measurement file; got {str(path)!r}, no file"
        )
    else:
        path = Path(path)
    return json.loads(path.read_text(encoding="utf-8"))


def bottleneck_fields(data):
    """The fields of the record "bottleneck": ``<split>_<bucket>_<model>_<measure>`` the mean over
    seeds (``_min``, ``_max``, ``_std`` the spread), ``<split>_<bucket>_sentences``, and the run's
    settings (seeds, epochs, framework, device, cores, load, seconds per run)."""
    from d2lcore.frameworks import REGISTRY

    fields = {
        "seeds": len(data["seeds"]),
        "seed_list": ", ".join(str(s) for s in data["seeds"]),
        "epochs": data["epochs"],
        "framework": REGISTRY[data["framework"]].label,
        "device": data["device"],
        "cores": data["machine"]["cores"],
        "load_min": min(min(r["load_average"]) for r in data["runs"]),
        "load_max": max(max(r["load_average"]) for r in data["runs"]),
        "date": data["date"],
    }
    for model in MODELS:
        seconds = [r["train_seconds"] for r in data["runs"] if r["model"] == model]
        fields[f"seconds_{model}"] = statistics.fmean(seconds)
    for model, splits in data["summary"].items():
        for split, buckets in splits.items():
            for bucket, entry in buckets.items():
                fields[f"{split}_{bucket}_sentences"] = entry["sentences"]
                for measure in MEASURES:
                    stats = entry[measure]
                    stem = f"{split}_{bucket}_{model}_{measure}"
                    fields[stem] = stats["mean"]
                    for key in ("min", "max", "std"):
                        fields[f"{stem}_{key}"] = stats[key]
    return fields


def plot_bottleneck(data, measure="bleu", figsize=(6.4, 2.7)):
    """Bars of ``measure`` by source length, without and with attention, for the training and the
    held-out sentences: the mean over seeds, each seed a dot, the line their range; under each
    group, its number of sentences. Returns the matplotlib figure."""
    from d2lcore.plotting import plt, use_svg_display

    use_svg_display()
    fig, axes = plt.subplots(
        1, len(SPLITS), figsize=figsize, sharey=True, layout="constrained"
    )
    runs = data["runs"]
    for ax, split in zip(axes, SPLITS):
        buckets = [b for b in BUCKETS if b in data["summary"]["plain"][split]]
        for i, model in enumerate(MODELS):
            x = [j + (i - 0.5) * 0.38 for j in range(len(buckets))]
            entries = [data["summary"][model][split][b][measure] for b in buckets]
            means = [e["mean"] for e in entries]
            ranges = [
                [m - e["min"] for m, e in zip(means, entries)],
                [e["max"] - m for m, e in zip(means, entries)],
            ]
            ax.bar(
                x, means, width=0.36, color=("#bbbbbb", "#c0392b")[i], label=LABELS[model]
            )
            ax.errorbar(
                x, means, yerr=ranges, fmt="none", ecolor="black", capsize=3, lw=1
            )
            for xi, bucket in zip(x, buckets):
                seeds = [
                    r["scores"][split][bucket][measure]
                    for r in runs
                    if r["model"] == model
                ]
                ax.plot([xi] * len(seeds), seeds, "k.", markersize=3)
        names = []
        for b in buckets:
            low, high = BUCKETS[b]
            n = data["summary"]["plain"][split][b]["sentences"]
            span = f"{low}" if low == high else f"{low}–{high}"
            names.append(f"{span} word{'s' if high > 1 else ''}\n({n})")
        ax.set_xticks(range(len(buckets)), names)
        ax.set_title(_SPLIT_TITLES[split], fontsize=10)
        ax.set_ylim(0, 1 if measure in ("bleu", "exact") else 100)
    axes[0].set_ylabel(
        {"bleu": "mean BLEU", "exact": "exact", "chrf": "chrF"}.get(measure, measure)
    )
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=2)
    return fig


def show_bottleneck(path=None):
    """Draw the bottleneck measurement (:func:`plot_bottleneck` of mean BLEU) and show its record
    ``"bottleneck"`` (:func:`bottleneck_fields`): the committed one, or the file at ``path``. The
    printed line names the script, framework, device, seeds and epochs; the machine's cores and
    load average are fields only. Returns the Record."""
    from d2lcore.records import show_record

    data = read_measurement("bottleneck", path)
    fields = bottleneck_fields(data)
    text = (
        f"Measured by benchmarks/bottleneck.py in {fields['framework']} on {fields['device']}: "
        f"{fields['seeds']} seeds, {fields['epochs']} epochs per run"
    )
    plot_bottleneck(data)
    return show_record("bottleneck", text, **fields)


# --- Label Smoothing and Weight Tying: benchmarks/transformer_smoothing.py -----------------------------------------

SMOOTHING_CONFIGS = ("baseline", "smoothing", "tied", "both")
"""The Transformer of the training page as it is (baseline), trained with label smoothing 0.1 (smoothing), with
its output layer tied to the target embedding (tied), and with both."""

SMOOTHING_MEASURES = {
    "bleu": ("held_out", "bleu"),
    "exact": ("held_out", "exact"),
    "corpus_bleu": ("held_out", "corpus_bleu"),
    "chrf": ("held_out", "chrf"),
    "max_prob": ("confidence", "held_out", "max_prob"),
    "entropy": ("confidence", "held_out", "entropy"),
    "nll": ("confidence", "held_out", "nll"),
    "accuracy": ("confidence", "held_out", "accuracy"),
    "train_max_prob": ("confidence", "training", "max_prob"),
    "train_entropy": ("confidence", "training", "entropy"),
    "train_nll": ("confidence", "training", "nll"),
    "parameters": ("parameters",),
    "seconds": ("train_seconds",),
}
"""The measures of a run, by name: the path of each in the run's dict. Held-out translation (mean per-sentence
BLEU, exact share, corpus BLEU, chrF) and, teacher-forced on the held-out and the training pairs, the mean
probability of the most probable token, the mean entropy and -log probability of the reference token (nats),
and the share of tokens predicted right; the number of parameters and the training time."""


def _measure(run, path):
    value = run
    for key in path:
        value = value[key]
    return value


def summarise_smoothing(data):
    """``{framework: {config: {measure: {"mean", "std", "min", "max"}}}}`` over the seeds of ``data["runs"]``."""
    summary = {}
    for run in data["runs"]:
        summary.setdefault(run["framework"], {}).setdefault(run["config"], []).append(run)
    return {
        framework: {
            config: {
                name: _stats([_measure(r, path) for r in runs])
                for name, path in SMOOTHING_MEASURES.items()
            }
            for config, runs in configs.items()
        }
        for framework, configs in summary.items()
    }


def smoothing_fields(data, framework):
    """The fields of the record "smoothing_study" for ``framework`` (``"pytorch"``): ``<config>_<measure>`` the
    mean over seeds (``_min``, ``_max``, ``_std`` the spread), and the run's settings (seeds, epochs, device,
    cores, load average, date)."""
    runs = [r for r in data["runs"] if r["framework"] == framework]
    fields = {
        "seeds": len({r["seed"] for r in runs}),
        "seed_list": ", ".join(str(s) for s in data["seeds"]),
        "epochs": data["epochs"],
        "smoothing": data["settings"]["smoothing"],
        "device": runs[0]["device"],
        "cores": data["machine"]["cores"],
        "load_min": min(min(r["load_average"]) for r in runs),
        "load_max": max(max(r["load_average"]) for r in runs),
        "date": data["date"],
    }
    for config, measures in data["summary"][framework].items():
        for name, stats in measures.items():
            fields[f"{config}_{name}"] = stats["mean"]
            for key in ("min", "max", "std"):
                fields[f"{config}_{name}_{key}"] = stats[key]
    return fields


SMOOTHING_LABELS = {
    "baseline": "baseline",
    "smoothing": "label smoothing",
    "tied": "tied weights",
    "both": "both",
}


def plot_smoothing(data, framework, figsize=(6.4, 2.5)):
    """Three panels for ``framework``, one point per seed and a bar for the mean of each config: the held-out
    mean BLEU, the mean probability of the most probable token and the mean entropy (teacher-forced on the
    held-out pairs). Returns the matplotlib figure."""
    from d2lcore.plotting import plt, use_svg_display

    use_svg_display()
    configs = [c for c in SMOOTHING_CONFIGS if c in data["summary"][framework]]
    panels = (
        ("bleu", "held-out mean BLEU"),
        ("max_prob", "top probability"),
        ("entropy", "entropy (nats)"),
    )
    fig, axes = plt.subplots(1, len(panels), figsize=figsize, layout="constrained")
    runs = [r for r in data["runs"] if r["framework"] == framework]
    colours = ("#bbbbbb", "#c0392b", "#2e86c1", "#7d3c98")
    for ax, (measure, title) in zip(axes, panels):
        path = SMOOTHING_MEASURES[measure]
        for i, config in enumerate(configs):
            ax.bar(
                i,
                data["summary"][framework][config][measure]["mean"],
                color=colours[i],
                width=0.7,
            )
            values = [_measure(r, path) for r in runs if r["config"] == config]
            ax.plot([i] * len(values), values, "k.", markersize=4)
        ax.set_xticks(
            range(len(configs)),
            [SMOOTHING_LABELS[c] for c in configs],
            rotation=30,
            ha="right",
        )
        ax.set_title(title, fontsize=10)
    return fig


@checked
def show_smoothing_study(framework, path=None):
    """Draw the label smoothing and weight tying measurement of ``framework`` (:func:`plot_smoothing`) and show
    its record ``"smoothing_study"`` (:func:`smoothing_fields`): the committed file, or the file at ``path``. The
    printed line names the script, framework, device, seeds and epochs. Returns the Record."""
    from d2lcore.frameworks import REGISTRY
    from d2lcore.records import show_record

    data = read_measurement("transformer_smoothing", path)
    fields = smoothing_fields(data, framework)
    text = (
        f"Measured by benchmarks/transformer_smoothing.py in {REGISTRY[framework].label} on "
        f"{fields['device']}: {fields['seeds']} seeds, {fields['epochs']} epochs per run"
    )
    plot_smoothing(data, framework)
    return show_record("smoothing_study", text, **fields)
