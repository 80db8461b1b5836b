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
    settings (seeds, epochs, framework, device, cores, load, seconds per run); where the file says
    so (benchmarks/bottleneck.py records it), the machine (``processor``, ``memory_gib``,
    ``system``, ``framework_version``) and the load average sampled while it ran
    (``load_sampled_min``, ``_mean``, ``_max``, ``load_samples``, and the 1-minute load when it
    started and ended, ``load_start``, ``load_end``)."""
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
    machine = data["machine"]
    for key in ("processor", "memory_gib", "system", "framework_version"):
        if key in machine:
            fields[key] = machine[key]
    if "load" in data:
        sampled = data["load"]["sampled"]
        fields.update(
            load_sampled_min=sampled["min"],
            load_sampled_mean=sampled["mean"],
            load_sampled_max=sampled["max"],
            load_samples=sampled["count"],
            load_start=data["load"]["before"][0],
            load_end=data["load"]["after"][0],
        )
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


# --- beam_search.json (benchmarks/beam_search.py): greedy decoding against beam search ---------------------------

BEAM_DECODERS = ("greedy", "beam_1", "beam_2", "beam_4", "beam_8", "beam_4_alpha_0")
"""The decoders measured: predict_seq2seq one sentence at a time; beam_search with a beam of 1, 2, 4 and 8 and
alpha = 0.6, all sentences in one batch; a beam of 4 without length normalisation (alpha = 0)."""

BEAM_MEASURES = ("bleu", "exact", "corpus_bleu", "chrf", "ms_per_sentence", "tokens")
"""Mean per-sentence BLEU (k = 2), share exact, corpus BLEU and chrF (0 ... 100), milliseconds of decoding per
sentence, mean output length in tokens."""

_BEAM_LABELS = {
    "greedy": "greedy",
    "beam_1": "1",
    "beam_2": "2",
    "beam_4": "4",
    "beam_8": "8",
    "beam_4_alpha_0": "4, α=0",
}


def summarise_beam_search(data):
    """``{framework: {decoder: {measure: {"mean", "std", "min", "max"}}}}`` over the runs' seeds."""
    summary = {}
    for framework in data["frameworks"]:
        runs = [r for r in data["runs"] if r["framework"] == framework]
        summary[framework] = {
            decoder: {
                measure: _stats([r["scores"][decoder][measure] for r in runs])
                for measure in BEAM_MEASURES
            }
            for decoder in data["decoders"]
        }
    return summary


def beam_search_fields(data):
    """The fields of the record "beam_search": ``<framework>_<decoder>_<measure>`` the mean over seeds
    (``_min``, ``_max`` the range), ``<framework>_seconds`` the mean training time, and the run's settings
    (seeds, epochs, sentences, device, cores, load)."""
    fields = {
        "seeds": len(data["seeds"]),
        "seed_list": ", ".join(str(s) for s in data["seeds"]),
        "epochs": data["epochs"],
        "sentences": data["runs"][0]["sentences"],
        # "cpu", "cpu(0)", "/device:CPU:0": the frameworks name the same device differently
        "device": "CPU"
        if all("cpu" in r["device"].lower() for r in data["runs"])
        else data["device"],
        "cores": data["machine"]["cores"],
        "load_min": min(min(r["load_average"]) for r in data["runs"]),
        "load_max": max(max(r["load_average"]) for r in data["runs"]),
        "date": data["date"],
    }
    for framework, decoders in data["summary"].items():
        runs = [r for r in data["runs"] if r["framework"] == framework]
        fields[f"{framework}_seconds"] = statistics.fmean(
            r["train_seconds"] for r in runs
        )
        for decoder, measures in decoders.items():
            for measure, stats in measures.items():
                stem = f"{framework}_{decoder}_{measure}"
                fields[stem] = stats["mean"]
                fields[f"{stem}_min"], fields[f"{stem}_max"] = stats["min"], stats["max"]
    return fields


def plot_beam_search(data, figsize=(6.4, 2.6)):
    """Corpus BLEU, chrF and milliseconds per sentence by decoder, one line per framework: the mean over
    seeds, the bar the range. Returns the matplotlib figure."""
    from d2lcore.frameworks import REGISTRY
    from d2lcore.plotting import plt, use_svg_display

    use_svg_display()
    decoders = [d for d in data["decoders"] if d in _BEAM_LABELS]
    fig, axes = plt.subplots(1, 3, figsize=figsize, layout="constrained")
    titles = {
        "corpus_bleu": "corpus BLEU",
        "chrf": "chrF",
        "ms_per_sentence": "ms per sentence",
    }
    for ax, (measure, title) in zip(axes, titles.items()):
        for i, (framework, summary) in enumerate(data["summary"].items()):
            x = [j + (i - 1) * 0.12 for j in range(len(decoders))]
            stats = [summary[d][measure] for d in decoders]
            means = [s["mean"] for s in stats]
            spread = [
                [m - s["min"] for m, s in zip(means, stats)],
                [s["max"] - m for m, s in zip(means, stats)],
            ]
            ax.errorbar(
                x,
                means,
                yerr=spread,
                fmt="o",
                markersize=3,
                capsize=2,
                lw=1,
                label=REGISTRY[framework].label,
            )
        ax.set_xticks(
            range(len(decoders)), [_BEAM_LABELS[d] for d in decoders], rotation=45
        )
        ax.set_title(title, fontsize=10)
        if measure == "ms_per_sentence":
            ax.set_yscale("log")
    axes[0].set_xlabel("decoder (beam size)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=3)
    return fig


def show_beam_search(path=None):
    """Draw the beam-search measurement (:func:`plot_beam_search`) and show its record ``"beam_search"``
    (:func:`beam_search_fields`): the committed one, or the file at ``path``. Returns the Record."""
    from d2lcore.records import show_record

    data = read_measurement("beam_search", path)
    fields = beam_search_fields(data)
    text = (
        f"Measured by benchmarks/beam_search.py on the {fields['device']}: {fields['seeds']} seeds per framework, "
        f"{fields['epochs']} epochs per run, {fields['sentences']} held-out sentences"
    )
    plot_beam_search(data)
    return show_record("beam_search", text, **fields)


# --- Grouped-Query and Memory-Efficient Attention: attention's peak memory by sequence length ---------------------

ATTENTION_METHODS = {
    "plain": "attention written out",
    "tiled": "tiled (d2l.tiled_attention)",
    "fused": "fused (the framework's own)",
}
"""The methods of ``efficient_attention.json`` (benchmarks/efficient_attention.py), with their labels."""


def efficient_attention_fields(data):
    """The fields of the record "efficient_attention": ``<framework>_<method>_<n>_mib``, the growth of the peak
    resident memory over one call in MiB, ``<framework>_<method>_<n>_ms`` its time, ``<method>_<n>_largest_mib``
    the largest intermediate from the shapes, and the run's settings (heads, head size, tile, lengths, cores,
    load, date)."""
    s = data["settings"]
    loads = [x for run in data["runs"] for x in run["load_average"]]
    fields = {
        "heads": s["heads"],
        "head_dim": s["head_dim"],
        "tile_size": s["tile_size"],
        "batch": s["batch"],
        "shortest": min(s["lengths"]),
        "longest": max(s["lengths"]),
        "cores": data["machine"]["cores"],
        "load_min": min(loads),
        "load_max": max(loads),
        "date": data["date"],
    }
    for run in data["runs"]:
        stem = f"{run['framework']}_{run['method']}_{run['n']}"
        fields[f"{stem}_mib"] = run["peak_growth_bytes"] / 2**20
        fields[f"{stem}_ms"] = run["seconds"] * 1e3
        if run["largest_intermediate_bytes"] is not None:
            fields[f"{run['method']}_{run['n']}_largest_mib"] = (
                run["largest_intermediate_bytes"] / 2**20
            )
    return fields


def plot_efficient_attention(data, figsize=(6.4, 2.6)):
    """Peak memory growth (MiB, log scale) against sequence length (log scale), one panel per framework, one
    line per method; the dotted line the size of the scores of attention written out. Returns the figure."""
    from d2lcore.frameworks import REGISTRY
    from d2lcore.plotting import plt, use_svg_display

    use_svg_display()
    frameworks = [
        f
        for f in ("mxnet", "pytorch", "tensorflow")
        if any(r["framework"] == f for r in data["runs"])
    ]
    fig, axes = plt.subplots(
        1,
        len(frameworks),
        figsize=figsize,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    axes = axes[0]
    styles = {
        "plain": ("#c0392b", "o"),
        "tiled": ("#2471a3", "s"),
        "fused": ("#7f7f7f", "^"),
    }
    lengths = sorted(data["settings"]["lengths"])
    scores = [
        next(
            r["largest_intermediate_bytes"]
            for r in data["runs"]
            if r["method"] == "plain" and r["n"] == n
        )
        / 2**20
        for n in lengths
    ]
    for ax, framework in zip(axes, frameworks):
        for method, label in ATTENTION_METHODS.items():
            runs = sorted(
                (
                    r
                    for r in data["runs"]
                    if r["framework"] == framework and r["method"] == method
                ),
                key=lambda r: r["n"],
            )
            if runs:
                color, marker = styles[method]
                mib = [max(r["peak_growth_bytes"], 1) / 2**20 for r in runs]
                ax.plot(
                    [r["n"] for r in runs],
                    mib,
                    color=color,
                    marker=marker,
                    ms=4,
                    label=label,
                )
        ax.plot(lengths, scores, "k:", lw=1, label="size of the n × n scores")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(lengths, [str(n) for n in lengths], fontsize=8)
        ax.minorticks_off()
        ax.set_title(REGISTRY[framework].label, fontsize=10)
        ax.set_xlabel("sequence length n", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("peak memory growth (MiB)", fontsize=9)
    handles, labels = axes[
        frameworks.index("pytorch") if "pytorch" in frameworks else 0
    ].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=4, fontsize=8)
    return fig


def show_efficient_attention(path=None):
    """Draw the committed measurement of attention's peak memory (:func:`plot_efficient_attention`), or the file at
    ``path``, and show its record ``"efficient_attention"`` (:func:`efficient_attention_fields`). The printed line
    names the script, the settings and the machine's cores; the load average is a field. Returns the Record."""
    from d2lcore.records import show_record

    data = read_measurement("efficient_attention", path)
    fields = efficient_attention_fields(data)
    text = (
        f"Measured by benchmarks/efficient_attention.py on a CPU ({fields['cores']} cores, one thread per "
        f"operation): self-attention of {fields['batch']} example, {fields['heads']} heads of {fields['head_dim']} "
        f"features, float32, tiles of {fields['tile_size']} keys, lengths {fields['shortest']} to "
        f"{fields['longest']}"
    )
    plot_efficient_attention(data)
    return show_record("efficient_attention", text, **fields)


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


def summarise_by_config(data, measures):
    """``{framework: {config: {measure: {"mean", "std", "min", "max"}}}}`` over the seeds of ``data["runs"]``
    (each run a dict with "framework", "config" and the paths of ``measures``: {name: path})."""
    grouped = {}
    for run in data["runs"]:
        grouped.setdefault(run["framework"], {}).setdefault(run["config"], []).append(run)
    return {
        framework: {
            config: {
                name: _stats([_measure(r, path) for r in runs])
                for name, path in measures.items()
            }
            for config, runs in configs.items()
        }
        for framework, configs in grouped.items()
    }


def summarise_smoothing(data):
    """The smoothing study's summary over seeds (:func:`summarise_by_config`)."""
    return summarise_by_config(data, SMOOTHING_MEASURES)


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


# --- Where the Layer Norm Goes: the study over seeds (benchmarks/transformer_practice.py) ---------------------

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


# --- Decoder-only or encoder–decoder: the study over seeds (benchmarks/lm_study.py) ------------------------------

LM_STUDY_CONFIGS = ("encoder_decoder", "prefix_rotary", "prefix_sinusoidal")
"""The encoder–decoder Transformer of the training page, and the prefix language model of the language-model page
with rotary embeddings and with the sinusoidal encoding instead."""

LM_STUDY_MEASURES = {
    "bleu": ("held_out", "bleu"),
    "exact": ("held_out", "exact"),
    "corpus_bleu": ("held_out", "corpus_bleu"),
    "chrf": ("held_out", "chrf"),
    "long_bleu": ("longer", "bleu"),
    "long_chrf": ("longer", "chrf"),
    "loss": ("loss_per_token",),
    "parameters": ("parameters",),
    "seconds": ("train_seconds",),
}
"""The measures of a run, by name: the path of each in the run's dict. Held-out translation (mean per-sentence
BLEU, exact share, corpus BLEU, chrF), the same BLEU and chrF on sources longer than any of training, the last
epoch's training loss per token, the number of parameters and the training time in seconds."""


def summarise_lm_study(data):
    """The language-model study's summary over seeds (:func:`summarise_by_config`)."""
    return summarise_by_config(data, LM_STUDY_MEASURES)


def lm_study_fields(data=None):
    """The fields of the record "lm_study": ``<framework>_<config>_<measure>`` the mean over seeds (``_min``,
    ``_max`` the range), the frameworks measured (``frameworks``, their labels), the number of seeds and
    epochs, the sentences scored (``held_out_sentences``, ``long_sentences``, ``long_min_tokens``,
    ``long_max_tokens``), and the load average's range over the runs (``load_min``, ``load_max``). ``data``:
    the committed measurement (data/measurements/lm_study.json) if None."""
    from d2lcore.frameworks import REGISTRY

    data = read_measurement("lm_study") if data is None else data
    runs = data["runs"]
    frameworks = list(dict.fromkeys(r["framework"] for r in runs))
    lengths = [r["longer"]["source_tokens"] for r in runs]
    fields = {
        "frameworks": ", ".join(REGISTRY[f].label for f in frameworks),
        "seeds": len({r["seed"] for r in runs}),
        "epochs": data["epochs"],
        "held_out_sentences": runs[0]["held_out"]["sentences"],
        "long_sentences": runs[0]["longer"]["sentences"],
        "long_min_tokens": min(low for low, _ in lengths),
        "long_max_tokens": max(high for _, high in lengths),
        "load_min": min(min(r["load_average"]) for r in runs),
        "load_max": max(max(r["load_average"]) for r in runs),
        "date": data["date"],
    }
    for framework, configs in summarise_lm_study(data).items():
        for config, measures in configs.items():
            for name, stats in measures.items():
                stem = f"{framework}_{config}_{name}"
                fields[stem] = stats["mean"]
                fields[f"{stem}_min"], fields[f"{stem}_max"] = stats["min"], stats["max"]
    return fields
