"""The committed beam-search study (data/measurements/beam_search.json, written by benchmarks/beam_search.py):
well-formed, made with the page's settings, its summary the one its runs give, a beam of 1 giving greedy
decoding's translations in every run; and every figure that the page quotes from it is a field of the record that
show_beam_search shows."""

import json
import re
from pathlib import Path

import pytest

from booktools.quotes import ROLE
from booktools.split import read_source
from d2lcore import FRAMEWORKS, measurements, records

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "data" / "measurements" / "beam_search.json"
PAGE = ROOT / "chapters" / "attention" / "beam-search.md"


@pytest.fixture(scope="module")
def data():
    return json.loads(FILE.read_text(encoding="utf-8"))


def test_the_package_reads_the_committed_file(data):
    assert measurements.read_measurement("beam_search") == data


def test_every_framework_and_seed(data):
    assert len(data["seeds"]) >= 3 and data["frameworks"] == list(FRAMEWORKS)
    pairs = sorted((r["framework"], r["seed"]) for r in data["runs"])
    assert pairs == sorted((f, s) for f in FRAMEWORKS for s in data["seeds"])
    assert data["decoders"] == list(measurements.BEAM_DECODERS)
    for run in data["runs"]:
        assert run["epochs"] == data["epochs"] and run["sentences"] == 120
        assert len(run["load_average"]) == 2 and all(x >= 0 for x in run["load_average"])
        for decoder in data["decoders"]:
            s = run["scores"][decoder]
            assert 0 <= s["bleu"] <= 1 and 0 <= s["exact"] <= 1
            assert 0 <= s["corpus_bleu"] <= 100 and 0 <= s["chrf"] <= 100
            assert s["ms_per_sentence"] > 0 and 1 <= s["tokens"] <= 10


def test_a_beam_of_one_is_greedy_in_every_run(data):
    """The same translations, so the same scores; only the time differs (one sentence at a time or a batch)."""
    for run in data["runs"]:
        greedy, beam_1 = run["scores"]["greedy"], run["scores"]["beam_1"]
        for measure in ("bleu", "exact", "corpus_bleu", "chrf", "tokens"):
            assert beam_1[measure] == greedy[measure], (run["framework"], run["seed"], measure)


def test_settings_are_the_pages(data):
    code = "\n".join(c.source for c in read_source(PAGE).cells if c.cell_type == "code")
    s = data["settings"]
    assert (
        f"num_hiddens, num_layers, dropout = {s['num_hiddens']}, {s['num_layers']}, {s['dropout']}"
        in code
    )
    assert f"batch_size, num_steps = {s['batch_size']}, {s['num_steps']}" in code
    assert f"lr, num_epochs, device = {s['lr']}, {data['epochs']}, d2l.try_gpu()" in code
    assert f"ffn_num_hiddens, num_heads = {s['ffn_num_hiddens']}, {s['num_heads']}" in code
    assert "d2l.set_seed(1)" in code and s["alpha"] == 0.6


def test_summary_is_the_runs_summary(data):
    assert data["summary"] == json.loads(json.dumps(measurements.summarise_beam_search(data)))


def test_show_beam_search_draws_and_shows_the_record(data):
    from d2lcore.plotting import plt

    with records.collect() as shown:
        record = measurements.show_beam_search()
    assert [r.name for r in shown] == ["beam_search"] and record is shown[0]
    assert dict(record) == measurements.beam_search_fields(data)
    fig = plt.gcf()
    assert [ax.get_title() for ax in fig.axes] == ["corpus BLEU", "chrF", "ms per sentence"]
    plt.close(fig)


def test_the_page_quotes_fields_of_the_record(data):
    source = read_source(PAGE)
    text = "\n".join(c.source for c in source.cells if c.cell_type == "markdown")
    quoted = [m["field"] for m in ROLE.finditer(text) if m["name"] == "beam_search"]
    assert len(quoted) >= 5, "the page quotes the measurement"
    fields = measurements.beam_search_fields(data)
    assert [f for f in quoted if f not in fields] == []
    code = [c.source for c in source.cells if c.cell_type == "code"]
    assert any(re.fullmatch(r"\w+ = d2l\.show_beam_search\(\)", c.strip()) for c in code)
