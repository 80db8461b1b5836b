"""The book's trained claims hold over seeds and CPUs: data/measurements/trained_claims.json, written by
benchmarks/trained_claims.py, measured every claim that a checked cell asserts, in every framework and CPU setting,
over at least 10 seeds, with the page's recipe as it is now; and every minimum clears the page's threshold with a
margin."""

import importlib.util
import json
from pathlib import Path

import pytest

from d2lcore import FRAMEWORKS

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "data" / "measurements" / "trained_claims.json"
MARGIN = 0.04
"""How far above its threshold a claim's smallest value over the seeds must be."""


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location(
        "trained_claims", ROOT / "benchmarks" / "trained_claims.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def results():
    return {
        (r["claim"], r["framework"], r["setting"]): r
        for r in json.loads(FILE.read_text(encoding="utf-8"))["results"]
    }


def test_every_claim_framework_and_cpu_setting_is_measured(bench, results):
    wanted = {
        (claim, fw, setting)
        for claim in bench.CLAIMS
        for fw in FRAMEWORKS
        for setting in bench.settings_for(fw)
    }
    assert wanted <= set(results), f"not measured: {sorted(wanted - set(results))}"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_measured_recipe_is_the_pages(bench, results, framework):
    """A change of the page's recipe (epochs, learning rate, the model) needs a new measurement."""
    for claim in bench.CLAIMS:
        for setting in bench.settings_for(framework):
            result = results[claim, framework, setting]
            assert result["replace"] == [], (
                f"{claim}, {framework}, {setting}: measured a changed recipe"
            )
            assert result["recipe"] == bench.recipe_hash(claim, framework), (
                f"the {framework} recipe of the claim {claim!r} changed since it was measured: run "
                f"benchmarks/trained_claims.py --claim {claim} --framework {framework} again"
            )


def test_every_minimum_clears_its_threshold_with_a_margin(bench, results):
    for (claim, fw, setting), result in results.items():
        assert len(result["runs"]) >= 10 and len({r["seed"] for r in result["runs"]}) == len(
            result["runs"]
        )
        for figure, value in bench.CLAIMS[claim].get("required", {}).items():
            assert all(r[figure] == value for r in result["runs"]), (claim, fw, setting, figure)
        for figure, threshold in bench.CLAIMS[claim]["threshold"].items():
            smallest = min(r[figure] for r in result["runs"])
            assert smallest == result["summary"][figure]["min"]
            assert smallest >= threshold + MARGIN, (
                f"{claim}, {fw}, {setting}: the smallest {figure} over the seeds is {smallest:.3f}, less than "
                f"{MARGIN} above the page's threshold {threshold}"
            )


def test_the_page_asserts_the_measured_thresholds(bench):
    """The checked cells compare with the thresholds the measurement was judged against."""
    pages = ROOT / "chapters" / "attention"
    reversal = (pages / bench.CLAIMS["reversal"]["page"]).read_text(encoding="utf-8")
    assert "reversal['share'] >= 0.9)" in reversal and bench.CLAIMS["reversal"]["threshold"] == {
        "share": 0.9
    }
    heads = (pages / bench.CLAIMS["heads"]["page"]).read_text(encoding="utf-8")
    assert "min(heads['left'], heads['right']) >= 0.95)" in heads
    assert bench.CLAIMS["heads"]["threshold"] == {"worst": 0.95}


@pytest.mark.parametrize(
    ("claim", "figure", "sentence"),
    [
        ("reversal", "share", r"the share never fell below (\d+)%"),
        ("heads", "worst", r"each looked at its own for at\s+least (\d+)% of the queries"),
    ],
)
def test_the_prose_quotes_a_bound_that_the_measurement_holds(
    bench, results, claim, figure, sentence
):
    """What the prose says of all seeds and CPUs is true of the measurement (a bound, rounded down)."""
    import re

    text = (ROOT / "chapters" / "attention" / bench.CLAIMS[claim]["page"]).read_text(
        encoding="utf-8"
    )
    [bound] = re.findall(sentence, text)
    smallest = min(r["summary"][figure]["min"] for (c, _, _), r in results.items() if c == claim)
    assert smallest >= int(bound) / 100, (
        f"{claim}: the page says {bound}%, the smallest measured is {smallest:.3f}"
    )
