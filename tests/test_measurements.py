"""The committed measurement of the bottleneck (data/measurements/bottleneck.json, written by
benchmarks/bottleneck.py): well-formed, made with the Bahdanau page's settings, its summary the one its
runs give, its buckets those of the corpus; and every figure that the page quotes from it is a field of
the record that d2l.show_bottleneck shows."""

import collections
import json
import re
from pathlib import Path

import pytest

from booktools.quotes import ROLE
from booktools.split import read_source
from d2lcore import measurements, records
from d2lcore.datasets import read_data_nmt
from d2lcore.text import preprocess_nmt, tokenize_nmt

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "data" / "measurements" / "bottleneck.json"
PAGE = ROOT / "chapters" / "attention" / "bahdanau-attention.md"


@pytest.fixture(scope="module")
def data():
    return json.loads(FILE.read_text(encoding="utf-8"))


def test_the_package_reads_the_committed_file(data):
    assert measurements.read_measurement("bottleneck") == data


def test_runs_of_both_models_for_every_seed(data):
    assert len(data["seeds"]) >= 3
    pairs = sorted((r["model"], r["seed"]) for r in data["runs"])
    assert pairs == sorted((m, s) for m in measurements.MODELS for s in data["seeds"])
    for run in data["runs"]:
        assert run["epochs"] == data["epochs"]
        assert run["train_seconds"] > 0 and 0 < run["loss_per_token"] < 10
        assert len(run["load_average"]) == 2 and all(x >= 0 for x in run["load_average"])
        for split in measurements.SPLITS:
            for bucket, scores in run["scores"][split].items():
                assert 0 <= scores["bleu"] <= 1 and 0 <= scores["exact"] <= 1, (split, bucket)
                assert 0 <= scores["corpus_bleu"] <= 100 and 0 <= scores["chrf"] <= 100


def test_settings_are_the_pages(data):
    """The benchmark trained the page's model: the page's training cell sets the same values."""
    code = "\n".join(c.source for c in read_source(PAGE).cells if c.cell_type == "code")
    s = data["settings"]
    assert data["epochs"] == 250 and data["framework"] == "pytorch"
    assert (
        f"embed_size, num_hiddens, num_layers, dropout = {s['embed_size']}, {s['num_hiddens']}, "
        f"{s['num_layers']}, {s['dropout']}" in code
    )
    assert f"batch_size, num_steps = {s['batch_size']}, {s['num_steps']}" in code
    assert f"lr, num_epochs, device = {s['lr']}, {data['epochs']}, d2l.try_gpu()" in code
    assert s["num_examples"] == 600


def test_buckets_hold_the_corpus_sentences(data):
    """Each bucket's count is that of the corpus's distinct English sentences of that length, and the
    buckets together hold every sentence."""
    corpora = {"training": (read_data_nmt(), 600), "held_out": (read_data_nmt("heldout"), None)}
    for split, (text, num_examples) in corpora.items():
        sources = {" ".join(s) for s in tokenize_nmt(preprocess_nmt(text), num_examples)[0]}
        counts = collections.Counter(measurements.bucket_of(source) for source in sources)
        assert None not in counts, f"{split}: a sentence outside every bucket"
        for run in data["runs"]:
            scores = run["scores"][split]
            assert scores["all"]["sentences"] == len(sources)
            assert {b: e["sentences"] for b, e in scores.items() if b != "all"} == dict(counts)


def test_summary_is_the_runs_summary(data):
    assert data["summary"] == json.loads(json.dumps(measurements.summarise(data)))
    entry = data["summary"]["attention"]["held_out"]["all"]["bleu"]
    values = [
        r["scores"]["held_out"]["all"]["bleu"] for r in data["runs"] if r["model"] == "attention"
    ]
    assert entry["min"] == min(values) and entry["max"] == max(values)
    assert entry["mean"] == pytest.approx(sum(values) / len(values))


def test_bucket_of_counts_words_not_punctuation():
    assert measurements.words("i'm home .") == 2
    assert measurements.bucket_of("go !") == "words_1"
    assert measurements.bucket_of("why is she sad ?") == "words_3_4"
    assert measurements.bucket_of("a b c d e") is None


def test_show_bottleneck_draws_and_shows_the_record(data):
    from d2lcore.plotting import plt

    with records.collect() as shown:
        record = measurements.show_bottleneck()
    assert [r.name for r in shown] == ["bottleneck"] and record is shown[0]
    assert dict(record) == measurements.bottleneck_fields(data)
    mean = data["summary"]["plain"]["training"]["words_2"]["chrf"]["mean"]
    assert record["training_words_2_plain_chrf"] == mean
    fig = plt.gcf()
    assert [ax.get_title() for ax in fig.axes] == ["Training sentences", "Held-out sentences"]
    plt.close(fig)


def test_the_page_quotes_fields_of_the_record(data):
    """Every {record}`bottleneck.field` of the page is a field of the record the page's cell shows."""
    source = read_source(PAGE)
    text = "\n".join(c.source for c in source.cells if c.cell_type == "markdown")
    quoted = [m["field"] for m in ROLE.finditer(text) if m["name"] == "bottleneck"]
    assert len(quoted) >= 5, "the page quotes the measurement"
    fields = measurements.bottleneck_fields(data)
    assert [f for f in quoted if f not in fields] == []
    code = [c.source for c in source.cells if c.cell_type == "code"]
    assert any(re.fullmatch(r"\w+ = d2l\.show_bottleneck\(\)", c.strip()) for c in code)


def test_a_bad_path_is_named(tmp_path):
    with pytest.raises(TypeError, match="path must be"):
        measurements.read_measurement("bottleneck", 3)
    with pytest.raises(FileNotFoundError, match="path must be"):
        measurements.read_measurement("bottleneck", tmp_path / "none.json")


def test_what_the_page_says_holds(data):
    """The page's reading of the figures: attention ahead on the held-out sentences in every measure; in
    mean BLEU its gain grows with the source length (more for three or four words than for two on the
    held-out sentences too), by less than it moves between seeds; chrF's held-out gains are both positive."""
    gain = data["summary"]["gain"]
    training, held_out = gain["training"], gain["held_out"]

    def mean(entry, measure="bleu"):
        return entry[measure]["mean"]

    assert all(mean(held_out["all"], m) > 0 for m in ("bleu", "chrf", "corpus_bleu"))
    assert mean(training["words_1"]) < mean(training["words_2"]) < mean(training["words_3_4"])
    assert mean(held_out["words_2"]) < mean(held_out["words_3_4"])
    # the seeds' spread of the longest group's gain exceeds the difference between the groups
    spread = training["words_3_4"]["bleu"]["max"] - training["words_3_4"]["bleu"]["min"]
    assert spread > mean(training["words_3_4"]) - mean(training["words_2"])
    assert mean(held_out["words_2"], "chrf") > 0 and mean(held_out["words_3_4"], "chrf") > 0


def test_the_file_says_which_machine_and_how_busy(data):
    """The committed file names the machine and the load average over the whole benchmark (sampled) and for
    each run, and the record carries them."""
    machine = data["machine"]
    assert machine["cores"] >= 1 and machine["processor"] and machine["memory_gib"] > 0
    assert machine["framework_version"].startswith("torch ") and machine["system"]
    load = data["load"]
    assert len(load["before"]) == 3 and len(load["after"]) == 3
    for sampled in [load["sampled"]] + [r["load_samples"] for r in data["runs"]]:
        assert sampled["count"] >= 1 and 0 <= sampled["min"] <= sampled["mean"] <= sampled["max"]
    fields = measurements.bottleneck_fields(data)
    assert fields["processor"] == machine["processor"]
    assert fields["load_sampled_mean"] == load["sampled"]["mean"]
    assert fields["load_start"] == load["before"][0] and fields["load_end"] == load["after"][0]


def test_the_page_says_where_and_how_busy():
    """The bottleneck section quotes the machine and the sampled load through the record."""
    text = PAGE.read_text(encoding="utf-8")
    quoted = {m["field"] for m in ROLE.finditer(text) if m["name"] == "bottleneck"}
    wanted = {
        "date",
        "cores",
        "processor",
        "load_sampled_mean",
        "load_sampled_min",
        "load_sampled_max",
    }
    assert wanted <= quoted, wanted - quoted
