"""The decoder-only against encoder–decoder study (benchmarks/lm_study.py): d2lcore.measurements' summary over
seeds and record fields, on a small made-up measurement whose figures are known; the benchmark's longer held-out
sources are longer than every training source. The committed file (data/measurements/lm_study.json) gets its own
test once the study has run."""

import importlib.util
import sys
from pathlib import Path

import pytest

from d2lcore import measurements

ROOT = Path(__file__).resolve().parents[1]


def made_up_run(framework, config, seed):
    """A run whose figures follow from its framework, config and seed."""
    k = measurements.LM_STUDY_CONFIGS.index(config)
    return {
        "framework": framework,
        "config": config,
        "seed": seed,
        "epochs": 2,
        "train_seconds": 10.0 * (k + 1) + seed,
        "loss_per_token": 1.0 + k,
        "load_average": [0.5 + seed, 1.5 + seed],
        "parameters": 1000 * (k + 1),
        "held_out": {
            "sentences": 120,
            "bleu": 0.1 * k + 0.01 * seed,
            "exact": 0.0,
            "corpus_bleu": 5.0 * seed,
            "chrf": 30.0 + seed,
        },
        "longer": {
            "sentences": 60,
            "bleu": 0.05 * seed,
            "exact": 0.0,
            "corpus_bleu": 1.0,
            "chrf": 20.0 + k,
            "source_tokens": [6 + seed % 2, 10 - seed % 2],
        },
    }


MADE_UP = {
    "epochs": 2,
    "date": "2026-11-29",
    "seeds": [1, 2, 3],
    "runs": [
        made_up_run(framework, config, seed)
        for seed in (1, 2, 3)
        for framework in ("pytorch", "tensorflow")
        for config in measurements.LM_STUDY_CONFIGS
    ],
}


def test_summary_is_mean_min_max_over_seeds():
    summary = measurements.summarise_lm_study(MADE_UP)
    assert set(summary) == {"pytorch", "tensorflow"}
    assert set(summary["pytorch"]) == set(measurements.LM_STUDY_CONFIGS)
    rotary = summary["pytorch"]["prefix_rotary"]  # k = 1
    assert set(rotary) == set(measurements.LM_STUDY_MEASURES)
    assert rotary["bleu"]["mean"] == pytest.approx(0.12)
    assert rotary["bleu"]["min"] == pytest.approx(0.11) and rotary["bleu"]["max"] == pytest.approx(
        0.13
    )
    assert rotary["bleu"]["std"] == pytest.approx(0.01)
    assert rotary["seconds"] == {"mean": 22.0, "std": 1.0, "min": 21.0, "max": 23.0}
    assert rotary["long_bleu"]["mean"] == pytest.approx(0.10)
    assert rotary["long_chrf"]["mean"] == 21.0
    assert rotary["parameters"]["mean"] == 2000


def test_fields_name_framework_config_and_measure():
    fields = measurements.lm_study_fields(MADE_UP)
    assert fields["frameworks"] == "PyTorch, TensorFlow"
    assert (fields["seeds"], fields["epochs"]) == (3, 2)
    assert (fields["held_out_sentences"], fields["long_sentences"]) == (120, 60)
    assert (fields["long_min_tokens"], fields["long_max_tokens"]) == (6, 10)
    assert (fields["load_min"], fields["load_max"]) == (1.5, 4.5)
    assert fields["tensorflow_prefix_sinusoidal_chrf"] == pytest.approx(32.0)
    assert fields["tensorflow_prefix_sinusoidal_chrf_min"] == 31.0
    assert fields["tensorflow_prefix_sinusoidal_chrf_max"] == 33.0
    assert fields["pytorch_encoder_decoder_parameters"] == 1000
    assert fields["pytorch_encoder_decoder_long_bleu_max"] == pytest.approx(0.15)
    names = {
        f"{fw}_{c}_{m}"
        for fw in ("pytorch", "tensorflow")
        for c in measurements.LM_STUDY_CONFIGS
        for m in measurements.LM_STUDY_MEASURES
    }
    assert names <= set(fields)
    assert not any(name.startswith("mxnet_") for name in fields)


def test_longer_sources_are_longer_than_every_training_source():
    from d2lcore.datasets import read_data_nmt
    from d2lcore.text import preprocess_nmt, tokenize_nmt

    spec = importlib.util.spec_from_file_location("lm_study", ROOT / "benchmarks" / "lm_study.py")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        study = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(study)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    settings = study.SETTINGS
    sources, _ = tokenize_nmt(preprocess_nmt(read_data_nmt()), settings["num_examples"])
    longest = max(len(s) for s in sources)
    pairs = study.long_pairs()
    assert len(pairs) == 60
    lengths = [len(source.split()) for source, _ in pairs]
    assert min(lengths) > longest
    # with <eos>, every joined source fits the longer rows, and is longer than the training rows hold
    assert max(lengths) + 1 <= settings["long_steps"]
    assert all(refs and all(len(r.split()) >= 2 for r in refs) for _, refs in pairs)


def test_the_stored_study_is_complete_and_holds_what_the_page_says():
    """data/measurements/lm_study.json, which the page "Translating with a Decoder-Only Model"
    (chapters/attention/decoder-only-translation.md) quotes (section "Decoder-Only or Encoder-Decoder?" and its
    summary): three seeds of every model in every framework, its summary its own, and each claim of the prose true
    of it."""
    data = measurements.read_measurement("lm_study")
    if "summary" in data:
        assert measurements.summarise_lm_study(data) == data["summary"]
    seeds = {}
    for run in data["runs"]:
        seeds.setdefault((run["framework"], run["config"]), set()).add(run["seed"])
    assert seeds == {
        (fw, config): {1, 2, 3}
        for fw in ("mxnet", "pytorch", "tensorflow")
        for config in measurements.LM_STUDY_CONFIGS
    }
    f = measurements.lm_study_fields(data)
    assert f["seeds"] == 3 and f["long_sentences"] > 0
    for fw in ("mxnet", "pytorch", "tensorflow"):
        ed, rot, sin = (
            f"{fw}_{c}" for c in ("encoder_decoder", "prefix_rotary", "prefix_sinusoidal")
        )
        # about a third fewer parameters
        assert 0.6 < f[f"{rot}_parameters"] / f[f"{ed}_parameters"] < 0.73
        assert f[f"{rot}_parameters"] == f[f"{sin}_parameters"]
        # both prefix models ahead of the encoder-decoder on held-out BLEU and chrF, in every framework
        for prefix in (rot, sin):
            assert f[f"{prefix}_bleu"] > f[f"{ed}_bleu"] and f[f"{prefix}_chrf"] > f[f"{ed}_chrf"]
        # the sinusoidal encoding has the higher held-out mean
        assert f[f"{sin}_bleu"] > f[f"{rot}_bleu"]
        # on the longer sources: the seeds' ranges of the two encodings overlap
        assert f[f"{rot}_long_bleu_min"] <= f[f"{sin}_long_bleu_max"]
        assert f[f"{sin}_long_bleu_min"] <= f[f"{rot}_long_bleu_max"]
    # rotary ahead on average in PyTorch and TensorFlow, level (within 0.01) in MXNet
    for fw in ("pytorch", "tensorflow"):
        assert f[f"{fw}_prefix_rotary_long_bleu"] > f[f"{fw}_prefix_sinusoidal_long_bleu"]
    assert abs(f["mxnet_prefix_rotary_long_bleu"] - f["mxnet_prefix_sinusoidal_long_bleu"]) < 0.01
    # in PyTorch the encoder-decoder's best seed is below the worst seed of either prefix model
    assert f["pytorch_encoder_decoder_bleu_max"] < min(
        f["pytorch_prefix_rotary_bleu_min"], f["pytorch_prefix_sinusoidal_bleu_min"]
    )
