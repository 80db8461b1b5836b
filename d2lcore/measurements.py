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


# --- Training a Transformer Well: the study over seeds (benchmarks/transformer_practice.py) ---------------------

PRACTICE_RECIPES = ("post_norm", "post_norm_warmup", "pre_norm")
"""Post-norm at the peak rate throughout, post-norm with warmup to it, pre-norm at it throughout."""

PRACTICE_MEASURES = ("loss_per_token", "held_out_bleu")
"""The final training loss per token, and the mean per-sentence BLEU of the held-out sentences."""


def summarise_practice(data):
    """``{framework: {recipe: {measure: {"mean", "std", "min", "max"}}}}`` over the seeds of
    ``data["runs"]`` (``{framework: [run, ...]}``)."""
    return {
        framework: {
            recipe: {
                measure: _stats([r[measure] for r in runs if r["recipe"] == recipe])
                for measure in PRACTICE_MEASURES
            }
            for recipe in PRACTICE_RECIPES
        }
        for framework, runs in data["runs"].items()
    }


def practice_fields(data=None):
    """The fields of the record "practice_study": ``<framework>_<recipe>_<measure>`` the mean over
    seeds (``_min``, ``_max`` the range), the frameworks measured (``frameworks``, their labels;
    ``framework_keys``, their keys), the number of seeds and epochs, and the load average's range
    over the runs (``load_min``, ``load_max``). ``data``: the committed measurement if None."""
    data = read_measurement("transformer_practice") if data is None else data
    runs = [r for framework_runs in data["runs"].values() for r in framework_runs]
    from d2lcore.frameworks import REGISTRY

    fields = {
        "frameworks": ", ".join(REGISTRY[f].label for f in data["runs"]),
        "framework_keys": ", ".join(data["runs"]),
        "seeds": len(data["seeds"]),
        "epochs": data["epochs"],
        "load_min": min(min(r["load_average"]) for r in runs),
        "load_max": max(max(r["load_average"]) for r in runs),
    }
    for framework, recipes in summarise_practice(data).items():
        for recipe, measures in recipes.items():
            for measure, stats in measures.items():
                stem = f"{framework}_{recipe}_{measure}"
                fields[stem] = stats["mean"]
                fields[f"{stem}_min"], fields[f"{stem}_max"] = stats["min"], stats["max"]
    return fields
